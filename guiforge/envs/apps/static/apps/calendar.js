// Calendar: month and week views, event details, create / edit / delete with attendees.
// State: {today, events: [{id, title, start, end, location, attendees: [{name, email}], description}], people}.
"use strict";

(() => {
  const { h } = GF;
  const HOURS = [7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21];
  const EMAIL = /^[^@\s,;]+@[^@\s,;]+\.[^@\s,;]+$/;
  const S = () => GF.app("calendar");
  const U = () => GF.uiOf("calendar", () => ({ cursor: S().today, selected: S().today, editor: null }));

  const day = (isoText) => isoText.slice(0, 10);
  const pad = (n) => String(n).padStart(2, "0");

  function eventsOn(date) {
    return S().events.filter((e) => day(e.start) <= date && day(e.end) >= date)
      .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  }

  function monthStart(date) { return `${date.slice(0, 7)}-01`; }

  function shiftMonth(date, n) {
    const d = GF.parse(monthStart(date));
    d.setUTCMonth(d.getUTCMonth() + n);
    return GF.iso(d, false);
  }

  function weekStart(date) {
    const d = GF.parse(date);
    return GF.addDays(date, -d.getUTCDay());
  }

  // "14:00", "2pm", "2:30 PM", "9.15" -> "HH:MM", or null.
  function parseTime(text) {
    const m = /^\s*(\d{1,2})(?:[:.](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?\s*$/i.exec(text || "");
    if (!m) return null;
    let hr = +m[1];
    const mi = +(m[2] || 0);
    const ap = (m[3] || "").toLowerCase();
    if (ap.startsWith("p") && hr < 12) hr += 12;
    if (ap.startsWith("a") && hr === 12) hr = 0;
    if (hr > 23 || mi > 59) return null;
    return `${pad(hr)}:${pad(mi)}`;
  }

  // "2024-05-20", "5/20/2024" -> "YYYY-MM-DD", or null.
  function parseDate(text) {
    const t = (text || "").trim();
    let m = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(t);
    if (m) return `${m[1]}-${pad(+m[2])}-${pad(+m[3])}`;
    m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(t);
    if (m) return `${m[3]}-${pad(+m[1])}-${pad(+m[2])}`;
    return null;
  }

  function person(text) {
    const t = text.trim();
    if (!t) return null;
    const lower = t.toLowerCase();
    const known = S().people.find((p) => p.email.toLowerCase() === lower || p.name.toLowerCase() === lower);
    if (known) return { name: known.name, email: known.email };
    if (EMAIL.test(t)) return { name: t, email: t };
    return undefined;
  }

  // -- editor -------------------------------------------------------------------------------
  function openEditor(init) {
    U().editor = { id: null, title: "", date: U().selected, start: "09:00", end: "10:00", location: "",
      attendees: [], attendeeText: "", description: "", error: null, ...init };
    GF.openOverlay({ kind: "editor" });
  }

  function editExisting(e) {
    openEditor({ id: e.id, title: e.title, date: day(e.start), start: e.start.slice(11, 16), end: e.end.slice(11, 16),
      endDate: day(e.end), location: e.location, attendees: e.attendees.map((a) => ({ ...a })), description: e.description });
  }

  function addAttendee(ed) {
    const parts = ed.attendeeText.split(/[,;]+/).map((p) => p.trim()).filter(Boolean);
    for (const p of parts) {
      const who = person(p);
      if (who === undefined) { ed.error = `Unknown attendee “${p}”. Use a contact's name or an email address.`; return false; }
      if (!ed.attendees.some((a) => a.email === who.email)) ed.attendees.push(who);
    }
    ed.attendeeText = "";
    return true;
  }

  function saveEvent() {
    const ed = U().editor;
    ed.error = null;
    if (!ed.title.trim()) ed.error = "Add a title.";
    const date = parseDate(ed.date);
    const start = parseTime(ed.start);
    const end = parseTime(ed.end);
    if (!ed.error && !date) ed.error = "Date must look like 2024-05-20.";
    if (!ed.error && (!start || !end)) ed.error = "Times must look like 14:30 or 2:30 PM.";
    const endDate = ed.endDate && ed.endDate > date ? ed.endDate : date;
    if (!ed.error && `${endDate}T${end}` <= `${date}T${start}`) ed.error = "The event must end after it starts.";
    if (!ed.error) addAttendee(ed);
    if (ed.error) { GF.render(); return; }
    const record = { title: ed.title.trim(), start: `${date}T${start}:00`, end: `${endDate}T${end}:00`,
      location: ed.location.trim(), attendees: ed.attendees, description: ed.description };
    if (ed.id) {
      const e = S().events.find((x) => x.id === ed.id);
      Object.assign(e, record);
    } else {
      S().events.push({ id: GF.nextId("ev"), ...record });
    }
    U().editor = null;
    U().cursor = date;
    U().selected = date;
    GF.save();
    GF.closeOverlay();
  }

  function deleteEvent(id) {
    S().events = S().events.filter((e) => e.id !== id);
    U().editor = null;
    GF.save();
    GF.closeOverlay();
  }

  function editorView() {
    const ed = U().editor;
    const q = ed.attendeeText.trim().toLowerCase();
    const suggestions = q ? S().people.filter((p) => (p.name.toLowerCase().includes(q) || p.email.toLowerCase().includes(q)) &&
      !ed.attendees.some((a) => a.email === p.email)).slice(0, 4) : [];
    const body = h("div", { class: "form" },
      ed.error ? h("div", { class: "error-banner", role: "alert", id: "event-error" }, ed.error) : null,
      GF.field("Title", GF.input(ed, "title", { id: "event-title", placeholder: "Add title", "data-autofocus": true })),
      h("div", { class: "form-grid three" },
        GF.field("Date", GF.input(ed, "date", { id: "event-date", placeholder: "YYYY-MM-DD" })),
        GF.field("Start", GF.input(ed, "start", { id: "event-start", placeholder: "09:00" })),
        GF.field("End", GF.input(ed, "end", { id: "event-end", placeholder: "10:00" }))),
      GF.field("Location", GF.input(ed, "location", { id: "event-location", placeholder: "Add location" })),
      h("div", { class: "field" }, h("span", { class: "field-label" }, "Attendees"),
        ed.attendees.length ? h("div", { class: "row wrap" }, ed.attendees.map((a, i) => h("span", { class: "chip" }, a.name,
          h("button", { type: "button", "aria-label": `Remove ${a.name}`, html: ICONS.close,
            onClick: () => { ed.attendees.splice(i, 1); GF.render(); } })))) : null,
        GF.input(ed, "attendeeText", { id: "event-attendees", "aria-label": "Add attendees", placeholder: "Add people by name or email",
          onInput: () => GF.render(),
          onKeydown: (e) => { if (e.key === "Enter") { e.preventDefault(); addAttendee(ed); GF.render(); } } }),
        suggestions.length ? h("ul", { class: "list suggest", role: "listbox" }, suggestions.map((p) => h("li", null,
          h("button", { type: "button", role: "option", class: "suggest-item", id: `suggest-${p.email}`,
            onClick: () => { ed.attendees.push({ ...p }); ed.attendeeText = ""; GF.render(); } },
          GF.avatar(p.name, 28), h("span", null, p.name), h("span", { class: "faint" }, p.email))))) : null),
      GF.field("Description", GF.textarea(ed, "description", { id: "event-description", rows: 3 })));
    const actions = [
      ed.id ? GF.button("Delete", () => deleteEvent(ed.id), { class: "btn danger", id: "event-delete" }) : null,
      h("span", { class: "spacer" }),
      GF.button("Cancel", () => { U().editor = null; GF.closeOverlay(); }, { id: "event-cancel" }),
      GF.button("Save", saveEvent, { class: "btn primary", id: "event-save" }),
    ];
    return GF.modal(ed.id ? "Edit event" : "New event", body, actions, { id: "event-editor", onClose: () => { U().editor = null; GF.closeOverlay(); } });
  }

  function detailView(id) {
    const e = S().events.find((x) => x.id === id);
    if (!e) return null;
    const when = day(e.start) === day(e.end)
      ? `${GF.fmtDate(e.start, "long")} · ${GF.fmtTime(e.start)} – ${GF.fmtTime(e.end)}`
      : `${GF.fmtDate(e.start)} ${GF.fmtTime(e.start)} – ${GF.fmtDate(e.end)} ${GF.fmtTime(e.end)}`;
    const body = h("div", { class: "event-detail" },
      h("div", { class: "detail-line" }, GF.icon("clock"), h("span", null, when)),
      e.location ? h("div", { class: "detail-line" }, GF.icon("pin"), h("span", null, e.location)) : null,
      e.attendees.length ? h("div", { class: "detail-line top" }, GF.icon("users"),
        h("div", null, e.attendees.map((a) => h("div", { class: "row attendee" }, GF.avatar(a.name, 24), a.name,
          h("span", { class: "faint" }, a.email))))) : null,
      e.description ? h("div", { class: "detail-line top" }, GF.icon("note"), h("p", { class: "pre" }, e.description)) : null);
    return GF.modal(e.title, body, [
      GF.button("Delete", () => deleteEvent(e.id), { class: "btn danger", id: "event-delete" }),
      h("span", { class: "spacer" }),
      GF.button("Edit", () => editExisting(e), { class: "btn primary", id: "event-edit", icon: "edit" }),
    ], { id: "event-detail" });
  }

  // -- views --------------------------------------------------------------------------------
  function chip(e) {
    return h("button", { type: "button", class: "ev-chip", id: `event-${e.id}`, "aria-label": `${e.title}, ${GF.fmtTime(e.start)}`,
      onClick: (ev) => { ev.stopPropagation(); GF.openOverlay({ kind: "detail", id: e.id }); } },
    h("span", { class: "ev-dot" }), h("span", { class: "ev-time" }, GF.fmtTime(e.start).replace(":00", "")), h("span", { class: "ellipsis" }, e.title));
  }

  function monthView() {
    const u = U();
    const first = monthStart(u.cursor);
    const gridStart = weekStart(first);
    const mobile = GF.mobile();
    const cells = [];
    for (let i = 0; i < 42; i += 1) {
      const date = GF.addDays(gridStart, i);
      if (i === 35 && date.slice(0, 7) !== first.slice(0, 7)) break;
      const evs = eventsOn(date);
      const classes = ["day", date.slice(0, 7) === first.slice(0, 7) ? "" : "other", date === S().today ? "today" : "",
        mobile && date === u.selected ? "selected" : ""].join(" ");
      const label = GF.fmtDate(date, "long");
      cells.push(h("div", { class: classes, id: `day-${date}`, "aria-label": label,
        onClick: () => (mobile ? ((u.selected = date), GF.render()) : openEditor({ date })) },
      h("span", { class: "day-num" }, String(+date.slice(8))),
      mobile ? (evs.length ? h("span", { class: "dots" }, evs.slice(0, 3).map(() => h("i"))) : null)
        : [evs.slice(0, 3).map(chip), evs.length > 3 ? h("span", { class: "more" }, `+${evs.length - 3} more`) : null]));
    }
    const grid = h("div", { class: "month", onSwipeleft: () => { u.cursor = shiftMonth(u.cursor, 1); GF.render(); },
      onSwiperight: () => { u.cursor = shiftMonth(u.cursor, -1); GF.render(); } },
    GF.DAYS.map((d) => h("div", { class: "dow" }, mobile ? d[0] : d.slice(0, 3))), cells);
    if (!mobile) return grid;
    const evs = eventsOn(u.selected);
    return h("div", { class: "mobile-month" }, grid,
      h("div", { class: "agenda" }, h("h3", null, GF.fmtDate(u.selected, "long")),
        evs.length ? evs.map((e) => agendaItem(e)) : h("p", { class: "faint" }, "No events")));
  }

  function agendaItem(e) {
    return h("button", { type: "button", class: "agenda-item", id: `event-${e.id}`,
      onClick: () => GF.openOverlay({ kind: "detail", id: e.id }) },
    h("span", { class: "agenda-time" }, GF.fmtTime(e.start)),
    h("span", { class: "agenda-main" }, h("strong", null, e.title), e.location ? h("span", { class: "faint" }, e.location) : null));
  }

  function weekView() {
    const u = U();
    const start = weekStart(u.cursor);
    const days = [0, 1, 2, 3, 4, 5, 6].map((i) => GF.addDays(start, i));
    if (GF.mobile()) {
      return h("div", { class: "agenda week-agenda" }, days.map((d) => h("section", null,
        h("h3", { class: d === S().today ? "today-text" : "" }, GF.fmtDate(d, "long")),
        eventsOn(d).map(agendaItem))));
    }
    const cols = days.map((d) => {
      const evs = eventsOn(d).map((e) => {
        const s = day(e.start) < d ? 7 * 60 : +e.start.slice(11, 13) * 60 + +e.start.slice(14, 16);
        const en = day(e.end) > d ? 22 * 60 : +e.end.slice(11, 13) * 60 + +e.end.slice(14, 16);
        const top = Math.max(0, (s - 7 * 60) * 0.8);
        const height = Math.max(20, (Math.min(en, 22 * 60) - Math.max(s, 7 * 60)) * 0.8);
        return h("button", { type: "button", class: `week-ev${height < 36 ? " short" : ""}`, id: `event-${e.id}`, style: `top:${top}px;height:${height}px`,
          "aria-label": `${e.title}, ${GF.fmtTime(e.start)}`, onClick: (ev) => { ev.stopPropagation(); GF.openOverlay({ kind: "detail", id: e.id }); } },
        h("strong", { class: "ellipsis" }, e.title), h("span", null, `${GF.fmtTime(e.start)}`));
      });
      return h("div", { class: `week-col${d === S().today ? " today" : ""}` },
        HOURS.map((hr) => h("div", { class: "slot", id: `slot-${d}-${pad(hr)}`, "aria-label": `${GF.fmtDate(d)} ${hr}:00`,
          onClick: () => openEditor({ date: d, start: `${pad(hr)}:00`, end: `${pad(hr + 1)}:00` }) })), evs);
    });
    return h("div", { class: "week" },
      h("div", { class: "week-head" }, h("div"), days.map((d) => h("div", { class: `week-day${d === S().today ? " today" : ""}` },
        h("span", null, GF.DAYS[GF.parse(d).getUTCDay()].slice(0, 3)), h("strong", null, String(+d.slice(8)))))),
      h("div", { class: "week-body", "data-keep-scroll": "week" },
        h("div", { class: "hours" }, HOURS.map((hr) => h("div", { class: "hour" }, GF.fmtTime(`2000-01-01T${pad(hr)}:00`).replace(":00", "")))),
        cols));
  }

  function render(route) {
    const u = U();
    const view = route[0] === "week" ? "week" : "month";
    const step = (n) => {
      u.cursor = view === "week" ? GF.addDays(u.cursor, 7 * n) : shiftMonth(u.cursor, n);
      if (view === "month") u.selected = u.cursor;
      GF.render();
    };
    const title = view === "week"
      ? `Week of ${GF.fmtDate(weekStart(u.cursor))}` : GF.fmtDate(monthStart(u.cursor), "month");
    const toolbar = h("div", { class: "cal-toolbar" },
      GF.button("Today", () => { u.cursor = S().today; u.selected = S().today; GF.render(); }, { id: "cal-today" }),
      GF.iconButton("left", "Previous", () => step(-1), { id: "cal-prev" }),
      GF.iconButton("right", "Next", () => step(1), { id: "cal-next" }),
      h("h2", { class: "cal-title", id: "cal-title" }, title),
      h("span", { class: "spacer" }),
      h("div", { class: "segmented", role: "tablist" },
        h("a", { href: "/calendar/month", role: "tab", id: "view-month", class: view === "month" ? "active" : "" }, "Month"),
        h("a", { href: "/calendar/week", role: "tab", id: "view-week", class: view === "week" ? "active" : "" }, "Week")),
      GF.mobile() ? null : GF.button("Create", () => openEditor({ date: u.cursor }), { class: "btn primary", id: "cal-create", icon: "plus" }));
    const o = GF.overlay();
    return [
      GF.header("calendar"),
      h("main", { class: "cal-main" }, toolbar, view === "week" ? weekView() : monthView()),
      GF.mobile() ? h("button", { class: "fab", id: "cal-create-fab", "aria-label": "Create event", onClick: () => openEditor({ date: u.selected }) }, GF.icon("plus")) : null,
      o && o.kind === "editor" && u.editor ? editorView() : null,
      o && o.kind === "detail" ? detailView(o.id) : null,
    ];
  }

  GF.register("calendar", {
    title: "Calendar", icon: "calendar", color: "#1a73e8",
    empty: () => ({ today: "2024-01-01", events: [], people: [] }),
    render,
  });
})();
