// Contacts: an alphabetical list with search, a detail card, edit, add, delete, favourites.
// State: {contacts: [{id, name, email, phone, company, title, relation, notes, favorite}]}.
"use strict";

(() => {
  const { h } = GF;
  const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
  const RELATIONS = ["", "colleague", "family", "friend", "vendor", "client", "landlord", "accountant", "other"];
  const S = () => GF.app("contacts");
  const U = () => GF.uiOf("contacts", () => ({ query: "", form: null }));

  function sorted() {
    const q = U().query.trim().toLowerCase();
    return S().contacts.filter((c) => !q || [c.name, c.email, c.phone, c.company, c.title].join(" ").toLowerCase().includes(q))
      .slice().sort((a, b) => a.name.localeCompare(b.name));
  }

  function find(id) { return S().contacts.find((c) => c.id === id); }

  function listView(selected) {
    const items = [];
    let letter = null;
    const list = sorted();
    const favs = list.filter((c) => c.favorite);
    if (favs.length && !U().query) {
      items.push(h("li", { class: "letter" }, "Favorites"));
      for (const c of favs) items.push(row(c, selected, "fav-"));
    }
    for (const c of list) {
      const first = c.name[0].toUpperCase();
      if (first !== letter) { letter = first; items.push(h("li", { class: "letter" }, letter)); }
      items.push(row(c, selected, ""));
    }
    return h("div", { class: "contact-list" },
      h("div", { class: "list-head" }, h("h2", null, "Contacts"), h("span", { class: "faint" }, `${S().contacts.length}`)),
      list.length ? h("ul", { class: "list", "data-keep-scroll": "contacts" }, items)
        : GF.empty(U().query ? `No contacts match “${U().query}”` : "No contacts yet", "users"));
  }

  function row(c, selected, prefix) {
    return h("li", null, h("a", { class: `contact-row${c.id === selected ? " active" : ""}`, href: `/contacts/${c.id}`,
      id: `${prefix}contact-${c.id}`, "aria-label": c.name },
    GF.avatar(c.name, 36),
    h("span", { class: "contact-row-text" }, h("strong", { class: "ellipsis" }, c.name),
      h("span", { class: "faint ellipsis" }, c.company || c.email))));
  }

  function detailView(c) {
    const line = (icon, label, value, href) => (value ? h("div", { class: "detail-row" }, GF.icon(icon),
      h("div", null, h("div", { class: "faint small" }, label), href ? h("span", { class: "link" }, value) : h("span", null, value))) : null);
    return h("section", { class: "contact-detail card" },
      h("div", { class: "detail-hero" }, GF.avatar(c.name, 88),
        h("h1", null, c.name),
        h("p", { class: "muted" }, [c.title, c.company].filter(Boolean).join(" · ")),
        h("div", { class: "row" },
          GF.button("Edit", () => startEdit(c), { class: "btn primary", id: "contact-edit", icon: "edit" }),
          GF.iconButton("star", c.favorite ? "Remove from favorites" : "Add to favorites", () => { c.favorite = !c.favorite; GF.commit(); },
            { id: "contact-favorite", class: `icon-btn${c.favorite ? " on" : ""}` }),
          GF.iconButton("trash", "Delete contact", () => GF.openOverlay({ kind: "confirm-delete", id: c.id }), { id: "contact-delete" }))),
      h("div", { class: "detail-body" },
        line("mail", "Email", c.email, true),
        line("phone", "Phone", c.phone, true),
        line("bank", "Company", c.company),
        line("user", "Relation", c.relation),
        line("note", "Notes", c.notes)));
  }

  function startEdit(c) {
    U().form = c ? { ...c, error: null } : { id: null, name: "", email: "", phone: "", company: "", title: "", relation: "", notes: "", favorite: false, error: null };
    GF.go(c ? `/contacts/${c.id}/edit` : "/contacts/new");
  }

  function saveForm() {
    const f = U().form;
    f.error = null;
    if (!f.name.trim()) f.error = "Name is required.";
    else if (f.email.trim() && !EMAIL.test(f.email.trim())) f.error = "That email address does not look right.";
    if (f.error) { GF.render(); return; }
    const record = { name: f.name.trim(), email: f.email.trim(), phone: f.phone.trim(), company: f.company.trim(),
      title: f.title.trim(), relation: f.relation, notes: f.notes };
    let id = f.id;
    if (id) Object.assign(find(id), record);
    else {
      id = GF.nextId("contact");
      S().contacts.push({ id, ...record, favorite: false });
    }
    U().form = null;
    GF.save();
    GF.go(`/contacts/${id}`, true);
  }

  function formView() {
    const f = U().form;
    return h("section", { class: "contact-form card" },
      h("h2", null, f.id ? "Edit contact" : "New contact"),
      f.error ? h("div", { class: "error-banner", role: "alert", id: "contact-error" }, f.error) : null,
      h("div", { class: "form-grid" },
        h("div", { class: "full" }, GF.field("Name", GF.input(f, "name", { id: "contact-name", "data-autofocus": true }))),
        GF.field("Email", GF.input(f, "email", { id: "contact-email", type: "email" })),
        GF.field("Phone", GF.input(f, "phone", { id: "contact-phone", type: "tel" })),
        GF.field("Company", GF.input(f, "company", { id: "contact-company" })),
        GF.field("Job title", GF.input(f, "title", { id: "contact-title" })),
        GF.field("Relation", GF.select(f, "relation", RELATIONS.map((r) => [r, r ? r[0].toUpperCase() + r.slice(1) : "—"]), { id: "contact-relation" })),
        h("div", { class: "full" }, GF.field("Notes", GF.textarea(f, "notes", { id: "contact-notes", rows: 3 })))),
      h("div", { class: "row form-actions" },
        GF.button("Cancel", () => { GF.go(f.id ? `/contacts/${f.id}` : "/contacts", true); U().form = null; }, { id: "contact-cancel" }),
        GF.button("Save", saveForm, { class: "btn primary", id: "contact-save" })));
  }

  function confirmDelete(id) {
    const c = find(id);
    if (!c) return null;
    return GF.modal("Delete contact?", h("p", null, `${c.name} will be removed from your contacts.`), [
      GF.button("Cancel", GF.closeOverlay, { id: "confirm-cancel" }),
      GF.button("Delete", () => {
        S().contacts = S().contacts.filter((x) => x.id !== id);
        GF.save();
        GF.go("/contacts", true);
      }, { class: "btn primary danger-fill", id: "confirm-delete" }),
    ]);
  }

  function render(route) {
    const [id, sub] = route;
    const u = U();
    const mobile = GF.mobile();
    let pane;
    if (id === "new" || sub === "edit") {
      if (!u.form || (sub === "edit" && u.form.id !== id)) {
        const c = find(id);
        u.form = c ? { ...c, error: null } : { id: null, name: "", email: "", phone: "", company: "", title: "", relation: "", notes: "", favorite: false, error: null };
      }
      pane = formView();
    } else if (id) {
      const c = find(id);
      pane = c ? detailView(c) : GF.empty("This contact no longer exists", "user");
    } else {
      pane = mobile ? null : GF.empty("Select a contact to see the details", "users");
    }
    const leading = mobile && id ? GF.iconButton("back", "Back", () => GF.go(sub ? `/contacts/${id}` : "/contacts"), { id: "mobile-back" }) : null;
    const o = GF.overlay();
    return [
      GF.header("contacts", { leading, search: mobile && id ? null : GF.searchBox("contacts-search", "Search contacts", u, "query"),
        actions: mobile ? null : GF.button("New contact", () => startEdit(null), { class: "btn primary", id: "contact-new", icon: "plus" }) }),
      h("div", { class: "body" },
        !mobile || !id ? h("aside", { class: "contacts-side" }, listView(id)) : null,
        pane ? h("main", { class: "main contacts-main" }, pane) : null),
      mobile && !id ? h("button", { class: "fab", id: "contact-new-fab", "aria-label": "New contact", onClick: () => startEdit(null) }, GF.icon("plus")) : null,
      o && o.kind === "confirm-delete" ? confirmDelete(o.id) : null,
    ];
  }

  GF.register("contacts", { title: "Contacts", icon: "users", color: "#0b8043", empty: () => ({ contacts: [] }), render });
})();
