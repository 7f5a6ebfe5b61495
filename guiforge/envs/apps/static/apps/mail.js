// Mail: folders, read, reply / reply all / forward, compose with attachments, drafts,
// an attachment viewer. State: {me, inbox, sent, drafts, archive, trash, files, address_book}.
"use strict";

(() => {
  const { h } = GF;
  const FOLDERS = [
    ["inbox", "Inbox", "inbox"], ["starred", "Starred", "star"], ["sent", "Sent", "send"],
    ["drafts", "Drafts", "draft"], ["archive", "Archive", "archive"], ["trash", "Trash", "trash"],
  ];
  const REAL = ["inbox", "sent", "drafts", "archive", "trash"];
  const EMAIL = /^[^@\s,;]+@[^@\s,;]+\.[^@\s,;]+$/;

  const S = () => GF.app("mail");
  const U = () => GF.uiOf("mail", () => ({ query: "", compose: null, drawer: false, error: null, toast: null, viewer: {} }));

  function locate(id) {
    for (const f of REAL) {
      const i = S()[f].findIndex((m) => m.id === id);
      if (i >= 0) return [f, i];
    }
    return [null, -1];
  }

  function messages(folder) {
    const s = S();
    const list = folder === "starred" ? [...s.inbox, ...s.archive, ...s.sent].filter((m) => m.starred) : s[folder] || [];
    const q = U().query.trim().toLowerCase();
    const hits = q ? list.filter((m) => [m.subject, m.body, m.from.name, m.from.email, ...(m.to || [])].join(" ").toLowerCase().includes(q)) : list;
    return hits.slice().sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0));
  }

  function move(id, to) {
    const [f, i] = locate(id);
    if (!f || f === to) return;
    const [m] = S()[f].splice(i, 1);
    S()[to].push(m);
  }

  function file(id) { return S().files[id]; }

  function attachmentRef(id) {
    const f = file(id);
    return { id, filename: f ? f.filename : id, size: f ? f.size : 0 };
  }

  // -- compose ----------------------------------------------------------------------------
  function blankCompose() {
    return { to: "", cc: "", subject: "", body: "", attachments: [], draft_id: null, in_reply_to: null, forwarded_from: null };
  }

  function quote(m) {
    const lines = m.body.split("\n").map((l) => `> ${l}`).join("\n");
    return `\n\nOn ${GF.fmtDate(m.date, "long")} at ${GF.fmtTime(m.date)}, ${m.from.name} <${m.from.email}> wrote:\n${lines}`;
  }

  function startCompose(init, returnTo) {
    const u = U();
    u.compose = { ...blankCompose(), ...init };
    u.returnTo = returnTo || "inbox";
    u.error = null;
    GF.go("/mail/compose");
  }

  function reply(m, all) {
    const me = S().me.email.toLowerCase();
    const to = [m.from.email];
    let cc = [];
    if (all) {
      to.push(...m.to.filter((a) => a.toLowerCase() !== me && a !== m.from.email));
      cc = (m.cc || []).filter((a) => a.toLowerCase() !== me);
    }
    const subject = /^re:/i.test(m.subject) ? m.subject : `Re: ${m.subject}`;
    startCompose({ to: to.join(", "), cc: cc.join(", "), subject, body: quote(m), in_reply_to: m.id }, locate(m.id)[0]);
  }

  function forward(m) {
    const head = `\n\n---------- Forwarded message ----------\nFrom: ${m.from.name} <${m.from.email}>\n` +
      `Date: ${GF.fmtDate(m.date, "long")} at ${GF.fmtTime(m.date)}\nSubject: ${m.subject}\nTo: ${m.to.join(", ")}\n\n`;
    const subject = /^fwd?:/i.test(m.subject) ? m.subject : `Fwd: ${m.subject}`;
    startCompose({ subject, body: head + m.body, attachments: m.attachments.map((a) => ({ ...a })), forwarded_from: m.id },
      locate(m.id)[0]);
  }

  function recipients(text) {
    const book = S().address_book || [];
    const out = [];
    const bad = [];
    for (const raw of text.split(/[,;]+/).map((t) => t.trim()).filter(Boolean)) {
      const angle = /<([^>]+)>/.exec(raw);
      const addr = angle ? angle[1].trim() : raw;
      if (EMAIL.test(addr)) { out.push(addr); continue; }
      const named = book.find((c) => c.name.toLowerCase() === addr.toLowerCase());
      if (named) out.push(named.email);
      else bad.push(raw);
    }
    return { out, bad };
  }

  function buildMessage(c, to, cc) {
    return {
      id: c.draft_id || GF.nextId("msg"), from: { name: S().me.name, email: S().me.email }, to, cc,
      subject: c.subject.trim(), body: c.body, date: GF.tick(), read: true, starred: false,
      attachments: c.attachments.map((a) => ({ ...a })), in_reply_to: c.in_reply_to, forwarded_from: c.forwarded_from,
    };
  }

  function send() {
    const u = U();
    const c = u.compose;
    const to = recipients(c.to);
    const cc = recipients(c.cc);
    if (!to.out.length && !to.bad.length) { u.error = "Add at least one recipient."; GF.render(); return; }
    if (to.bad.length || cc.bad.length) {
      u.error = `Not a valid address: ${[...to.bad, ...cc.bad].join(", ")}`;
      GF.render();
      return;
    }
    const msg = buildMessage(c, to.out, cc.out);
    if (c.draft_id) S().drafts = S().drafts.filter((d) => d.id !== c.draft_id);
    S().sent.push(msg);
    u.compose = null;
    u.error = null;
    u.toast = "Message sent";
    GF.save();
    GF.go(`/mail/${u.returnTo || "inbox"}`, true);
  }

  function saveDraft() {
    const u = U();
    const c = u.compose;
    const to = c.to.split(/[,;]+/).map((t) => t.trim()).filter(Boolean);
    const cc = c.cc.split(/[,;]+/).map((t) => t.trim()).filter(Boolean);
    const msg = buildMessage(c, to, cc);
    S().drafts = S().drafts.filter((d) => d.id !== msg.id);
    S().drafts.push(msg);
    u.compose = null;
    u.toast = "Draft saved";
    GF.save();
    GF.go("/mail/drafts", true);
  }

  function openDraft(d) {
    startCompose({ to: d.to.join(", "), cc: (d.cc || []).join(", "), subject: d.subject, body: d.body,
      attachments: d.attachments.map((a) => ({ ...a })), draft_id: d.id, in_reply_to: d.in_reply_to || null,
      forwarded_from: d.forwarded_from || null }, "drafts");
  }

  function discard() {
    const u = U();
    u.compose = null;
    u.error = null;
    GF.go(`/mail/${u.returnTo || "inbox"}`, true);
  }

  function composeView() {
    const u = U();
    if (!u.compose) u.compose = blankCompose();
    const c = u.compose;
    const chips = c.attachments.map((a, i) => h("span", { class: "chip" }, GF.icon("clip"),
      h("span", { class: "ellipsis" }, a.filename),
      h("button", { type: "button", "aria-label": `Remove ${a.filename}`, html: ICONS.close,
        onClick: () => { c.attachments.splice(i, 1); GF.render(); } })));
    return h("div", { class: "compose card" },
      h("div", { class: "compose-head" }, h("h2", null, c.draft_id ? "Edit draft" : "New message"),
        GF.iconButton("close", "Discard", discard, { id: "compose-discard-x" })),
      u.error ? h("div", { class: "error-banner", role: "alert", id: "compose-error" }, u.error) : null,
      h("div", { class: "compose-line" }, h("span", null, "To"),
        GF.input(c, "to", { id: "compose-to", "aria-label": "To", placeholder: "Recipients", "data-autofocus": c.to ? null : true })),
      h("div", { class: "compose-line" }, h("span", null, "Cc"), GF.input(c, "cc", { id: "compose-cc", "aria-label": "Cc" })),
      h("div", { class: "compose-line" }, h("span", null, "Subject"),
        GF.input(c, "subject", { id: "compose-subject", "aria-label": "Subject" })),
      GF.textarea(c, "body", { id: "compose-body", "aria-label": "Message body", placeholder: "Write your message",
        class: "compose-body", "data-autofocus": c.to ? true : null }),
      chips.length ? h("div", { class: "row wrap compose-chips" }, chips) : null,
      h("div", { class: "compose-actions" },
        GF.button("Send", send, { class: "btn primary", id: "compose-send", icon: "send" }),
        GF.button("Attach file", () => GF.openOverlay({ kind: "attach" }), { id: "compose-attach", icon: "clip" }),
        h("span", { class: "spacer" }),
        GF.button("Save draft", saveDraft, { id: "compose-save-draft" }),
        GF.button("Discard", discard, { class: "btn danger", id: "compose-discard" })));
  }

  function attachPicker() {
    const c = U().compose;
    const files = Object.values(S().files).sort((a, b) => a.filename.localeCompare(b.filename));
    const body = files.length ? h("ul", { class: "list picker" }, files.map((f) => {
      const on = c.attachments.some((a) => a.id === f.id);
      return h("li", null, h("button", { type: "button", class: `picker-item${on ? " on" : ""}`, id: `attach-${f.id}`, role: "checkbox",
        "aria-checked": on ? "true" : "false", "aria-label": f.filename,
        onClick: () => {
          if (on) c.attachments = c.attachments.filter((a) => a.id !== f.id);
          else c.attachments.push(attachmentRef(f.id));
          GF.render();
        } },
      h("span", { class: "icon", html: ICONS[DocView.kindIcon(f)] }),
      h("span", { class: "grow ellipsis" }, f.filename), h("span", { class: "faint" }, DocView.size(f.size)),
      on ? h("span", { class: "icon", html: ICONS.check }) : null));
    })) : GF.empty("No files yet", "doc");
    return GF.modal("Attach files", body, [GF.button("Done", GF.closeOverlay, { class: "btn primary", id: "attach-done" })]);
  }

  // -- list and message views ---------------------------------------------------------------
  function rowMenu(m, e) {
    e.preventDefault();
    GF.openOverlay({ kind: "menu", id: m.id, x: e.clientX, y: e.clientY });
  }

  function listView(folder) {
    const list = messages(folder);
    const u = U();
    const label = FOLDERS.find((f) => f[0] === folder)[1];
    const rows = list.map((m) => {
      const who = folder === "sent" || folder === "drafts" ? `To: ${m.to.join(", ") || "(no recipient)"}` : m.from.name;
      return h("li", { class: `mail-row${m.read ? "" : " unread"}`, id: `msg-${m.id}`,
        onClick: () => (folder === "drafts" ? openDraft(m) : GF.go(`/mail/${folder}/${m.id}`)),
        onContextmenu: (e) => rowMenu(m, e),
        onSwipeleft: () => { move(m.id, "archive"); u.toast = "Archived"; GF.commit(); },
        "aria-label": `${m.from.name}: ${m.subject}` },
      h("button", { type: "button", class: `icon-btn star${m.starred ? " on" : ""}`, id: `star-${m.id}`, "aria-label": m.starred ? "Unstar" : "Star",
        html: ICONS.star, onClick: (e) => { e.stopPropagation(); m.starred = !m.starred; GF.commit(); } }),
      GF.mobile() ? GF.avatar(m.from.name, 40) : null,
      h("div", { class: "mail-row-main" },
        h("div", { class: "mail-row-top" }, h("span", { class: "mail-from ellipsis" }, who),
          m.attachments.length ? h("span", { class: "icon faint", html: ICONS.clip }) : null,
          h("span", { class: "mail-date" }, GF.fmtStamp(m.date))),
        h("div", { class: "mail-row-text ellipsis" }, h("span", { class: "mail-subject" }, m.subject || "(no subject)"),
          h("span", { class: "mail-snippet" }, ` — ${m.body.replace(/\s+/g, " ").slice(0, 140)}`))));
    });
    return h("div", { class: "mail-list" },
      h("div", { class: "list-head" }, h("h2", null, label), h("span", { class: "faint" }, `${list.length} conversations`)),
      u.toast ? h("div", { class: "ok-banner toast", role: "status" }, u.toast) : null,
      rows.length ? h("ul", { class: "list", "data-keep-scroll": `list-${folder}` }, rows)
        : GF.empty(u.query ? `No messages match “${u.query}”` : `No messages in ${label}`, "inbox"));
  }

  function messageView(folder, id) {
    const [f, i] = locate(id);
    if (!f) return GF.empty("This message no longer exists", "mail");
    const m = S()[f][i];
    if (!m.read) { m.read = true; GF.save(); }
    const back = () => GF.go(`/mail/${folder}`);
    const toolbar = h("div", { class: "msg-toolbar" },
      GF.iconButton("back", "Back to list", back, { id: "msg-back", class: "icon-btn hide-mobile" }),
      f !== "archive" ? GF.iconButton("archive", "Archive", () => { move(id, "archive"); U().toast = "Archived"; GF.save(); back(); }, { id: "msg-archive" }) : null,
      f !== "inbox" ? GF.iconButton("inbox", "Move to Inbox", () => { move(id, "inbox"); GF.save(); back(); }, { id: "msg-to-inbox" }) : null,
      f !== "trash" ? GF.iconButton("trash", "Delete", () => { move(id, "trash"); U().toast = "Moved to Trash"; GF.save(); back(); }, { id: "msg-delete" }) : null,
      GF.iconButton("mail", "Mark as unread", () => { m.read = false; GF.save(); back(); }, { id: "msg-unread" }),
      GF.iconButton("star", m.starred ? "Unstar" : "Star", () => { m.starred = !m.starred; GF.commit(); },
        { id: "msg-star", class: `icon-btn${m.starred ? " on" : ""}` }));
    const atts = m.attachments.map((a) => h("button", { type: "button", class: "attachment", id: `open-attachment-${a.id}`,
      "aria-label": `Open attachment ${a.filename}`, onClick: () => { U().viewer = {}; GF.openOverlay({ kind: "viewer", file: a.id }); } },
    h("span", { class: "attachment-icon", html: ICONS[file(a.id) ? DocView.kindIcon(file(a.id)) : "doc"] }),
    h("span", { class: "attachment-meta" }, h("span", { class: "ellipsis attachment-name" }, a.filename),
      h("span", { class: "faint" }, DocView.size(a.size)))));
    return h("article", { class: "message", "data-keep-scroll": "message" },
      toolbar,
      h("h1", { class: "msg-subject" }, m.subject || "(no subject)"),
      h("div", { class: "msg-from" }, GF.avatar(m.from.name, 40),
        h("div", { class: "grow" },
          h("div", null, h("strong", null, m.from.name), h("span", { class: "faint" }, ` <${m.from.email}>`)),
          h("div", { class: "faint ellipsis" }, `to ${m.to.join(", ")}${m.cc && m.cc.length ? `, cc ${m.cc.join(", ")}` : ""}`)),
        h("div", { class: "faint msg-date" }, `${GF.fmtDate(m.date)}, ${GF.fmtTime(m.date)}`)),
      h("div", { class: "msg-body" }, m.body),
      atts.length ? h("div", { class: "attachments" }, h("div", { class: "faint" }, `${atts.length} attachment${atts.length > 1 ? "s" : ""}`),
        h("div", { class: "row wrap" }, atts)) : null,
      h("div", { class: "msg-actions" },
        GF.button("Reply", () => reply(m, false), { id: "msg-reply", icon: "reply" }),
        GF.button("Reply all", () => reply(m, true), { id: "msg-reply-all", icon: "reply" }),
        GF.button("Forward", () => forward(m), { id: "msg-forward", icon: "forward" })));
  }

  function sidebar(folder) {
    const s = S();
    const unread = s.inbox.filter((m) => !m.read).length;
    const u = U();
    return h("nav", { class: "sidebar", "aria-label": "Folders" },
      GF.button("Compose", () => { u.drawer = false; startCompose({}, folder); }, { class: "btn primary big compose-btn", id: "compose", icon: "edit" }),
      FOLDERS.map(([key, label, icon]) => h("a", { class: `nav-item${key === folder ? " active" : ""}`, href: `/mail/${key}`, id: `folder-${key}`,
        onClick: () => { u.drawer = false; u.query = ""; } },
      GF.icon(icon), label,
      key === "inbox" && unread ? h("span", { class: "count" }, String(unread)) : key === "drafts" && s.drafts.length ? h("span", { class: "count" }, String(s.drafts.length)) : null)));
  }

  function menuOverlay(o) {
    const [f, i] = locate(o.id);
    if (!f) return null;
    const m = S()[f][i];
    const act = (fn) => () => { fn(); GF.closeOverlay(); GF.commit(); };
    return h("div", { class: "scrim clear", role: "presentation", onClick: (e) => { if (e.target === e.currentTarget) GF.closeOverlay(); } },
      h("div", { class: "menu", role: "menu", style: `left:${Math.min(o.x, window.innerWidth - 200)}px;top:${Math.min(o.y, window.innerHeight - 200)}px` },
        h("button", { role: "menuitem", id: "menu-archive", onClick: act(() => move(m.id, "archive")) }, GF.icon("archive"), "Archive"),
        h("button", { role: "menuitem", id: "menu-delete", onClick: act(() => move(m.id, "trash")) }, GF.icon("trash"), "Delete"),
        h("button", { role: "menuitem", id: "menu-read", onClick: act(() => { m.read = !m.read; }) }, GF.icon("mail"), m.read ? "Mark as unread" : "Mark as read"),
        h("button", { role: "menuitem", id: "menu-star", onClick: act(() => { m.starred = !m.starred; }) }, GF.icon("star"), m.starred ? "Unstar" : "Star")));
  }

  function overlays() {
    const o = GF.overlay();
    if (!o) return null;
    if (o.kind === "attach" && U().compose) return attachPicker();
    if (o.kind === "viewer" && file(o.file)) return DocView.viewer(file(o.file), U().viewer, GF.closeOverlay);
    if (o.kind === "menu") return menuOverlay(o);
    return null;
  }

  function render(route) {
    const u = U();
    let [folder, id] = route;
    if (folder === "compose") folder = null;
    const composing = route[0] === "compose";
    if (!composing && !FOLDERS.some((f) => f[0] === folder)) folder = "inbox";
    const mobile = GF.mobile();
    const inDetail = composing || Boolean(id);
    const leading = mobile ? (inDetail
      ? GF.iconButton("back", "Back", () => (composing ? discard() : GF.go(`/mail/${folder}`)), { id: "mobile-back" })
      : GF.iconButton("menu", "Open folders", () => { u.drawer = true; GF.render(); }, { id: "open-drawer" })) : null;
    const search = inDetail && mobile ? null : GF.searchBox("mail-search", "Search mail", u, "query");
    const main = composing ? composeView() : id ? messageView(folder, id) : listView(folder);
    if (!composing && !id) GF.after(() => { u.toast = null; }); // a toast shows once
    const showSidebar = !mobile || u.drawer;
    return [
      GF.header("mail", { search, leading, title: mobile && !inDetail ? "Mail" : null,
        actions: mobile ? null : h("span", { class: "avatar-wrap", title: S().me.email }, GF.avatar(S().me.name, 32)) }),
      h("div", { class: "body" },
        mobile && u.drawer ? h("div", { class: "drawer-scrim", role: "presentation", onClick: () => { u.drawer = false; GF.render(); } }) : null,
        showSidebar ? sidebar(folder || u.returnTo || "inbox") : null,
        h("main", { class: "main mail-main" }, main)),
      mobile && !inDetail ? h("button", { class: "fab", id: "compose-fab", "aria-label": "Compose", onClick: () => startCompose({}, folder) },
        GF.icon("edit"), "Compose") : null,
      overlays(),
    ];
  }

  GF.register("mail", {
    title: "Mail", icon: "mail", color: "#d93025",
    empty: () => ({ me: { name: "Me", email: "me@example.com" }, inbox: [], sent: [], drafts: [], archive: [], trash: [], files: {}, address_book: [] }),
    render,
    back: () => {
      const u = U();
      if (u.drawer) { u.drawer = false; return true; }
      return false;
    },
  });
})();
