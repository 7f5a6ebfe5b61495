// Chat: conversations, message bubbles, send (button or Enter), start a new conversation.
// State: {me: {id, name}, contacts: [{id, name}], threads: [{id, title, participants, messages, unread}]}.
"use strict";

(() => {
  const { h } = GF;
  const S = () => GF.app("chat");
  const U = () => GF.uiOf("chat", () => ({ query: "", drafts: {}, pick: "" }));

  const last = (t) => t.messages[t.messages.length - 1];

  function ordered() {
    const q = U().query.trim().toLowerCase();
    return S().threads.filter((t) => !q || `${t.title} ${t.messages.map((m) => m.text).join(" ")}`.toLowerCase().includes(q))
      .slice().sort((a, b) => {
        const x = last(a) ? last(a).sent_at : "";
        const y = last(b) ? last(b).sent_at : "";
        return x < y ? 1 : x > y ? -1 : 0;
      });
  }

  function send(t) {
    const drafts = U().drafts;
    const text = (drafts[t.id] || "").trim();
    if (!text) return;
    t.messages.push({ id: `${t.id}-m${t.messages.length + 1}`, sender: "me", sender_name: S().me.name, text, sent_at: GF.tick() });
    drafts[t.id] = "";
    GF.commit();
    const log = document.getElementById("chat-log");
    if (log) log.scrollTop = log.scrollHeight;
  }

  function openWith(contact) {
    let t = S().threads.find((x) => x.participants.length === 1 && x.participants[0] === contact.id);
    if (!t) {
      t = { id: GF.nextId("chat"), title: contact.name, participants: [contact.id], messages: [], unread: 0 };
      S().threads.push(t);
      GF.save();
    }
    GF.go(`/chat/${t.id}`);
  }

  function threadList(selected) {
    return h("div", { class: "thread-list" },
      h("ul", { class: "list", "data-keep-scroll": "threads" }, ordered().map((t) => {
        const m = last(t);
        return h("li", null, h("a", { class: `thread-row${t.id === selected ? " active" : ""}${t.unread ? " unread" : ""}`,
          href: `/chat/${t.id}`, id: `thread-${t.id}`, "aria-label": t.title },
        GF.avatar(t.title, 44),
        h("span", { class: "thread-text" },
          h("span", { class: "row" }, h("strong", { class: "ellipsis grow" }, t.title), m ? h("span", { class: "faint small" }, GF.fmtStamp(m.sent_at)) : null),
          h("span", { class: "row" }, h("span", { class: "ellipsis grow faint" }, m ? `${m.sender === "me" ? "You: " : ""}${m.text}` : "No messages yet"),
            t.unread ? h("span", { class: "badge" }, String(t.unread)) : null))));
      })));
  }

  function conversation(t) {
    if (t.unread) { t.unread = 0; GF.save(); }
    const drafts = U().drafts;
    if (!(t.id in drafts)) drafts[t.id] = "";
    const names = Object.fromEntries(S().contacts.map((c) => [c.id, c.name]));
    let day = null;
    const items = [];
    for (const m of t.messages) {
      if (m.sent_at.slice(0, 10) !== day) {
        day = m.sent_at.slice(0, 10);
        items.push(h("div", { class: "day-sep" }, GF.fmtDate(day, "long")));
      }
      const mine = m.sender === "me";
      items.push(h("div", { class: `bubble-row${mine ? " mine" : ""}` },
        h("div", { class: "bubble" },
          !mine && t.participants.length > 1 ? h("div", { class: "bubble-name" }, names[m.sender] || m.sender_name) : null,
          h("div", { class: "bubble-text" }, m.text),
          h("div", { class: "bubble-time" }, GF.fmtTime(m.sent_at)))));
    }
    const members = t.participants.map((p) => names[p] || p).join(", ");
    return h("section", { class: "conversation" },
      h("div", { class: "conv-head" }, GF.avatar(t.title, 36), h("div", null, h("strong", null, t.title), h("div", { class: "faint small" }, members))),
      h("div", { class: "chat-log", id: "chat-log" }, items.length ? items : GF.empty("Say hello", "chat")),
      h("form", { class: "composer", onSubmit: (e) => { e.preventDefault(); send(t); } },
        GF.input(drafts, t.id, { id: "chat-input", placeholder: "Type a message", "aria-label": "Message", "data-autofocus": GF.mobile() ? null : true }),
        h("button", { type: "submit", class: "send-btn", id: "chat-send", "aria-label": "Send", html: ICONS.send })));
  }

  function picker() {
    const u = U();
    const q = u.pick.trim().toLowerCase();
    const people = S().contacts.filter((c) => !q || c.name.toLowerCase().includes(q));
    return GF.modal("New conversation", h("div", { class: "form" },
      GF.input(u, "pick", { id: "new-chat-search", placeholder: "Search people", "aria-label": "Search people", "data-autofocus": true, onInput: () => GF.render() }),
      h("ul", { class: "list picker" }, people.map((c) => h("li", null, h("button", { type: "button", class: "picker-item", id: `new-chat-${c.id}`,
        onClick: () => { u.pick = ""; openWith(c); } }, GF.avatar(c.name, 32), c.name))))), null, { id: "new-chat" });
  }

  function render(route) {
    const [id] = route;
    const mobile = GF.mobile();
    const t = id ? S().threads.find((x) => x.id === id) : null;
    const o = GF.overlay();
    const pane = t ? conversation(t) : id ? GF.empty("This conversation no longer exists", "chat") : mobile ? null : GF.empty("Pick a conversation", "chat");
    if (t) GF.after(() => { const log = document.getElementById("chat-log"); if (log) log.scrollTop = log.scrollHeight; });
    return [
      GF.header("chat", {
        leading: mobile && id ? GF.iconButton("back", "Back", () => GF.go("/chat"), { id: "mobile-back" }) : null,
        search: mobile && id ? null : GF.searchBox("chat-search", "Search conversations", U(), "query"),
        actions: mobile ? null : GF.button("New chat", () => GF.openOverlay({ kind: "new" }), { class: "btn primary", id: "chat-new", icon: "plus" }),
      }),
      h("div", { class: "body" },
        !mobile || !id ? h("aside", { class: "chat-side" }, threadList(id)) : null,
        pane ? h("main", { class: "main chat-main" }, pane) : null),
      mobile && !id ? h("button", { class: "fab", id: "chat-new-fab", "aria-label": "New chat", onClick: () => GF.openOverlay({ kind: "new" }) }, GF.icon("plus")) : null,
      o && o.kind === "new" ? picker() : null,
    ];
  }

  GF.register("chat", { title: "Chat", icon: "chat", color: "#7b1fa2", empty: () => ({ me: { id: "me", name: "Me" }, contacts: [], threads: [] }), render });
})();
