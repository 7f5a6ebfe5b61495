// Notes: a searchable list, an editor that saves as you type, create, pin, delete.
// State: {notes: [{id, title, body, pinned, updated}]}.
"use strict";

(() => {
  const { h } = GF;
  const S = () => GF.app("notes");
  const U = () => GF.uiOf("notes", () => ({ query: "" }));

  function ordered() {
    const q = U().query.trim().toLowerCase();
    return S().notes.filter((n) => !q || `${n.title} ${n.body}`.toLowerCase().includes(q)).slice()
      .sort((a, b) => (a.pinned !== b.pinned ? (a.pinned ? -1 : 1) : a.updated < b.updated ? 1 : a.updated > b.updated ? -1 : 0));
  }

  function create() {
    const id = GF.nextId("note");
    S().notes.push({ id, title: "", body: "", pinned: false, updated: GF.tick() });
    GF.save();
    GF.go(`/notes/${id}`);
  }

  function touch(n) {
    n.updated = GF.now();
    GF.save();
  }

  function listView(selected) {
    const notes = ordered();
    return h("div", { class: "notes-list" },
      h("div", { class: "list-head" }, h("h2", null, "All notes"), h("span", { class: "faint" }, `${S().notes.length}`)),
      notes.length ? h("ul", { class: "list", "data-keep-scroll": "notes" }, notes.map((n) => h("li", null,
        h("a", { class: `note-row${n.id === selected ? " active" : ""}`, href: `/notes/${n.id}`, id: `note-${n.id}`,
          "aria-label": n.title || "Untitled note" },
        h("div", { class: "row" }, h("strong", { class: "ellipsis grow" }, n.title || "Untitled"),
          n.pinned ? h("span", { class: "icon pin-on", html: ICONS.pin }) : null),
        h("span", { class: "note-snippet" }, h("span", { class: "faint" }, `${GF.fmtStamp(n.updated)}  `), n.body.replace(/\s+/g, " ").slice(0, 90))))))
        : GF.empty(U().query ? `No notes match “${U().query}”` : "No notes yet", "note"));
  }

  function editor(n) {
    return h("article", { class: "note-editor" },
      h("div", { class: "note-toolbar" },
        h("span", { class: "faint", id: "note-updated" }, `Edited ${GF.fmtDate(n.updated)} at ${GF.fmtTime(n.updated)}`),
        h("span", { class: "spacer" }),
        GF.iconButton("pin", n.pinned ? "Unpin note" : "Pin note", () => { n.pinned = !n.pinned; touch(n); GF.render(); },
          { id: "note-pin", class: `icon-btn${n.pinned ? " on" : ""}` }),
        GF.iconButton("trash", "Delete note", () => GF.openOverlay({ kind: "confirm-delete", id: n.id }), { id: "note-delete" })),
      GF.input(n, "title", { id: "note-title", class: "note-title", placeholder: "Title", "aria-label": "Note title",
        "data-autofocus": n.title ? null : true, onInput: () => touch(n) }),
      GF.textarea(n, "body", { id: "note-body", class: "note-body", placeholder: "Start writing", "aria-label": "Note body",
        onInput: () => touch(n) }));
  }

  function confirmDelete(id) {
    const n = S().notes.find((x) => x.id === id);
    if (!n) return null;
    return GF.modal("Delete note?", h("p", null, `“${n.title || "Untitled"}” will be deleted.`), [
      GF.button("Cancel", GF.closeOverlay, { id: "confirm-cancel" }),
      GF.button("Delete", () => { S().notes = S().notes.filter((x) => x.id !== id); GF.save(); GF.go("/notes", true); },
        { class: "btn primary danger-fill", id: "confirm-delete" }),
    ]);
  }

  function render(route) {
    const [id] = route;
    const u = U();
    const mobile = GF.mobile();
    const note = id ? S().notes.find((n) => n.id === id) : null;
    const pane = note ? editor(note) : id ? GF.empty("This note no longer exists", "note") : mobile ? null : GF.empty("Select a note or create a new one", "note");
    const o = GF.overlay();
    return [
      GF.header("notes", {
        leading: mobile && id ? GF.iconButton("back", "Back", () => GF.go("/notes"), { id: "mobile-back" }) : null,
        search: mobile && id ? null : GF.searchBox("notes-search", "Search notes", u, "query"),
        actions: mobile ? null : GF.button("New note", create, { class: "btn primary", id: "note-new", icon: "plus" }),
      }),
      h("div", { class: "body" },
        !mobile || !id ? h("aside", { class: "notes-side" }, listView(id)) : null,
        pane ? h("main", { class: "main notes-main" }, pane) : null),
      mobile && !id ? h("button", { class: "fab", id: "note-new-fab", "aria-label": "New note", onClick: create }, GF.icon("plus")) : null,
      o && o.kind === "confirm-delete" ? confirmDelete(o.id) : null,
    ];
  }

  GF.register("notes", { title: "Notes", icon: "note", color: "#f29900", empty: () => ({ notes: [] }), render });
})();
