// The guiforge app runtime: one state store for every app, a path router, DOM helpers,
// persistence (so a reload keeps the episode's state) and the window.guiforge API the
// adapter drives. No clocks and no randomness: times come from the seeded system clock.
"use strict";

const GF = (() => {
  const STORE_KEY = "guiforge.state";
  const apps = {};
  const order = [];
  let state = { apps: {}, system: { now: "2024-01-01T09:00:00", minutes: 0, seq: 0 } };
  let ui = {};
  let lastPath = null;
  let afterRender = []; // work that needs the new view in the document (scroll a log to its end)
  const renderHooks = []; // drawn after every render, outside #root (presentation.js)
  // What the adapter waits on before it takes a frame (guiforge.frameState()):
  let renders = 0; // views drawn so far
  let tapPending = false; // a tap ended whose click Chromium has not delivered yet
  let leaving = false; // a navigation away from this document has begun

  // -- DOM helpers ----------------------------------------------------------------------
  const NATIVE_CLICKABLE = new Set(["BUTTON", "A", "INPUT", "SELECT", "TEXTAREA", "LABEL", "SUMMARY"]);

  // Icons are trusted constants: each is parsed once, then cloned (innerHTML ran the HTML
  // parser again for every icon of every render).
  const parsedHtml = new Map();
  function fragment(html) {
    let template = parsedHtml.get(html);
    if (!template) {
      template = document.createElement("template");
      template.innerHTML = html;
      parsedHtml.set(html, template);
    }
    return template.content.cloneNode(true);
  }

  function h(tag, props, ...kids) {
    const el = document.createElement(tag);
    let value = null;
    for (const [k, v] of Object.entries(props || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith("on")) el.addEventListener(k.slice(2).toLowerCase(), v);
      else if (k === "class") el.className = v;
      else if (k === "style") el.style.cssText = v;
      else if (k === "html") el.appendChild(fragment(v)); // trusted constants only (icons)
      else if (k === "value") value = v;
      else if (k === "checked" || k === "selected" || k === "disabled") el[k] = true;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    const clickable = props && (props.onClick || props.onclick);
    if (clickable && !NATIVE_CLICKABLE.has(el.tagName) && !el.hasAttribute("role")) {
      el.setAttribute("role", "button");
      el.tabIndex = 0;
    }
    append(el, kids);
    if (value !== null) el.value = value; // after children so <select> options exist
    return el;
  }

  function append(el, kids) {
    for (const kid of kids) {
      if (kid === null || kid === undefined || kid === false) continue;
      if (Array.isArray(kid)) append(el, kid);
      else if (kid instanceof Node) el.appendChild(kid);
      else el.appendChild(document.createTextNode(String(kid)));
    }
  }

  // -- state ----------------------------------------------------------------------------
  function register(name, def) {
    apps[name] = def;
    if (!order.includes(name)) order.push(name);
  }

  function app(name) {
    if (!state.apps[name]) state.apps[name] = apps[name].empty();
    return state.apps[name];
  }

  function uiOf(name, init) {
    if (!ui[name]) ui[name] = init ? init() : {};
    return ui[name];
  }

  function save() {
    try {
      localStorage.setItem(STORE_KEY, JSON.stringify(state));
    } catch (e) {
      /* storage full or blocked: state still lives in memory */
    }
  }

  function commit() {
    save();
    render();
  }

  function restore() {
    try {
      const raw = localStorage.getItem(STORE_KEY);
      if (raw) state = JSON.parse(raw);
    } catch (e) {
      /* corrupt storage: keep the empty state */
    }
    for (const name of order) app(name);
  }

  function nextId(prefix) {
    state.system.seq += 1;
    return `${prefix}-${state.system.seq}`;
  }

  // The logical clock: every recorded action advances it by one minute.
  function tick() {
    state.system.minutes += 1;
    return now();
  }

  function now() {
    return addMinutes(state.system.now, state.system.minutes);
  }

  // -- dates (naive ISO strings, computed in UTC so the host timezone never matters) ------
  const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December"];
  const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

  function parse(iso) {
    const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(iso || "");
    if (!m) return null;
    return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] || 0), +(m[5] || 0), +(m[6] || 0)));
  }

  function iso(d, withTime = true) {
    const p = (n) => String(n).padStart(2, "0");
    const day = `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}`;
    return withTime ? `${day}T${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:00` : day;
  }

  function addMinutes(isoText, minutes) {
    const d = parse(isoText);
    d.setUTCMinutes(d.getUTCMinutes() + minutes);
    return iso(d);
  }

  function addDays(isoText, days) {
    const d = parse(isoText);
    d.setUTCDate(d.getUTCDate() + days);
    return iso(d, isoText.length > 10);
  }

  function fmtTime(isoText) {
    const d = parse(isoText);
    const hr = d.getUTCHours();
    const mm = String(d.getUTCMinutes()).padStart(2, "0");
    return `${((hr + 11) % 12) + 1}:${mm} ${hr < 12 ? "AM" : "PM"}`;
  }

  function fmtDate(isoText, style = "short") {
    const d = parse(isoText);
    if (!d) return "";
    const mon = MONTHS[d.getUTCMonth()];
    if (style === "long") return `${DAYS[d.getUTCDay()]}, ${mon} ${d.getUTCDate()}, ${d.getUTCFullYear()}`;
    if (style === "month") return `${mon} ${d.getUTCFullYear()}`;
    return `${mon.slice(0, 3)} ${d.getUTCDate()}, ${d.getUTCFullYear()}`;
  }

  // Mail-style relative stamp: time today, otherwise a short date.
  function fmtStamp(isoText) {
    return isoText.slice(0, 10) === now().slice(0, 10) ? fmtTime(isoText) : fmtDate(isoText).replace(/, \d{4}$/, "");
  }

  const SYMBOLS = { USD: "$", EUR: "€", GBP: "£", JPY: "¥", INR: "₹", AUD: "A$", CAD: "C$" };

  function money(amount, currency) {
    const neg = amount < 0;
    const [whole, cents] = Math.abs(amount).toFixed(2).split(".");
    const text = `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}.${cents}`;
    const sym = SYMBOLS[currency];
    const body = sym ? `${sym}${text}` : `${text} ${currency || ""}`.trim();
    return neg ? `−${body}` : body;
  }

  function initials(name) {
    return (name || "?").split(/\s+/).filter(Boolean).slice(0, 2).map((w) => w[0].toUpperCase()).join("");
  }

  // A stable colour per name (a string hash, not randomness).
  function hue(text) {
    let x = 0;
    for (const ch of text || "") x = (x * 31 + ch.charCodeAt(0)) % 360;
    return x;
  }

  function avatar(name, size = 36) {
    return h("span", { class: "avatar", "aria-hidden": "true",
      style: `width:${size}px;height:${size}px;font-size:${Math.round(size * 0.4)}px;background:hsl(${hue(name)},45%,45%)` },
      initials(name));
  }

  // -- routing --------------------------------------------------------------------------
  function path() {
    return location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  }

  // How far back the history goes from here, for a browser's back and forward buttons: each
  // entry pushed in this episode carries its depth; ``navTop`` is the deepest one reachable
  // (a push cuts off what was forward of it, as a browser does).
  function navDepth() { return (history.state && history.state.gf) || 0; }
  function canGoBack() { return navDepth() > 0; }
  function canGoForward() { return navDepth() < (state.system.navTop || 0); }

  function go(to, replace = false) {
    ui.overlay = null;
    ui.dropdown = null;
    const depth = navDepth() + (replace ? 0 : 1);
    if (replace) history.replaceState({ gf: depth }, "", to);
    else history.pushState({ gf: depth }, "", to);
    state.system.navTop = depth;
    save();
    render();
  }

  function overlay() { return ui.overlay || null; }
  function openOverlay(o) { ui.overlay = o; ui.dropdown = null; render(); }
  function closeOverlay() { ui.overlay = null; render(); }

  // The system back gesture: close what is open first, then go back in history.
  function systemBack() {
    if (ui.dropdown) { ui.dropdown = null; render(); return "closed"; }
    if (ui.overlay) { closeOverlay(); return "closed"; }
    const current = path();
    const def = current.length ? apps[current[0]] : null;
    if (def && def.back && def.back(current.slice(1))) { render(); return "closed"; }
    return "history";
  }

  // -- rendering ------------------------------------------------------------------------
  const restoredScroll = new WeakMap(); // list -> the scrollTop render() last put back
  function render() {
    const root = document.getElementById("root");
    const current = location.pathname;
    const samePage = current === lastPath;
    const keep = {};
    if (samePage) {
      for (const el of root.querySelectorAll("[data-keep-scroll]")) keep[el.dataset.keepScroll] = el.scrollTop;
    }
    const active = document.activeElement;
    const focusId = active && active.id && active !== document.body ? active.id : null;
    const sel = focusId && "selectionStart" in active ? [active.selectionStart, active.selectionEnd] : null;

    const parts = path();
    const name = parts[0];
    const view = name && apps[name] ? renderApp(name, parts.slice(1)) : renderHome();
    const framed = framer && framer(view);  // a browser's or a phone's bars around the view (chrome.js)
    root.replaceChildren(...(framed || (mobile() ? [statusBar(), view] : [view])));
    document.title = name && apps[name] ? apps[name].title : "Home";

    for (const el of root.querySelectorAll("[data-keep-scroll]")) {
      if (el.dataset.keepScroll in keep) {
        el.scrollTop = keep[el.dataset.keepScroll];
        restoredScroll.set(el, el.scrollTop);
      }
    }
    if (focusId) {
      const el = document.getElementById(focusId);
      if (el) {
        el.focus({ preventScroll: true });
        if (sel && "setSelectionRange" in el) {
          try { el.setSelectionRange(sel[0], sel[1]); } catch (e) { /* not a text field */ }
        }
      }
    }
    const autofocus = root.querySelector("[data-autofocus]");
    if (autofocus && !samePage) autofocus.focus();
    lastPath = current;
    const queued = afterRender;
    afterRender = [];
    for (const fn of queued) fn();
    for (const fn of renderHooks) fn();
    renders += 1;
  }

  function onRender(fn) { renderHooks.push(fn); }
  let framer = null; // view -> the page's children around it, or null for the bare view
  function frameWith(fn) { framer = fn; }
  function system() { return state.system; }

  // Run fn once the view being rendered is in the document, before render() returns: the
  // next frame, screenshot or element scan already sees its effect.
  function after(fn) { afterRender.push(fn); }

  function renderApp(name, rest) {
    const def = apps[name];
    // A theme's accent restyles every app; with none, each app keeps its own colour.
    const theme = (state.system.presentation || {}).theme;
    const style = theme && theme.accent ? null : `--accent:${def.color}`;
    return h("div", { class: `app app-${name}`, style }, def.render(rest, app(name)));
  }

  function mobile() { return window.innerWidth < 700; }

  function statusBar() {
    const t = fmtTime(now()).replace(/ (AM|PM)$/, "");
    return h("div", { class: "statusbar", "aria-hidden": "true" },
      h("span", null, t),
      h("span", { class: "statusbar-icons", html: ICONS.signal + ICONS.wifi + ICONS.battery }));
  }

  function renderHome() {
    const d = parse(now());
    const tiles = order.map((name) => h("a", { class: "launcher-app", href: `/${name}`, id: `open-${name}`, "aria-label": apps[name].title },
      h("span", { class: "launcher-icon", style: `background:${apps[name].color}`, html: ICONS[apps[name].icon] || "" }),
      h("span", { class: "launcher-label" }, apps[name].title)));
    return h("div", { class: "launcher" },
      h("div", { class: "launcher-clock" },
        h("div", { class: "launcher-time" }, fmtTime(now()).replace(/ (AM|PM)$/, "")),
        h("div", { class: "launcher-date" }, `${DAYS[d.getUTCDay()]}, ${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`)),
      h("div", { class: "launcher-grid", role: "list" }, tiles));
  }

  // A shared app header: title, optional search, the app switcher (desktop only).
  function header(name, { title, search, actions, leading } = {}) {
    const def = apps[name];
    const switcher = mobile() ? null : h("div", { class: "switcher" },
      h("button", { class: "icon-btn", id: "app-switcher", "aria-label": "Apps", html: ICONS.grid,
        onClick: () => (overlay() && overlay().kind === "switcher" ? closeOverlay() : openOverlay({ kind: "switcher" })) }),
      overlay() && overlay().kind === "switcher" ? h("div", { class: "switcher-menu", role: "menu" },
        order.map((n) => h("a", { class: "switcher-item", href: `/${n}`, role: "menuitem", id: `switch-${n}` },
          h("span", { class: "launcher-icon small", style: `background:${apps[n].color}`, html: ICONS[apps[n].icon] || "" }),
          apps[n].title))) : null);
    return h("header", { class: "topbar" },
      leading || null,
      h("a", { class: "brand", href: `/${name}`, "aria-label": `${def.title} home` },
        h("span", { class: "brand-icon", style: `background:${def.color}`, html: ICONS[def.icon] || "" }),
        h("span", { class: "brand-name" }, title || def.title)),
      search || h("div", { class: "spacer" }),
      actions || null,
      switcher);
  }

  function searchBox(id, placeholder, obj, key, onChange) {
    return h("label", { class: "search" },
      h("span", { class: "search-icon", html: ICONS.search, "aria-hidden": "true" }),
      h("input", { id, type: "search", placeholder, "aria-label": placeholder, value: obj[key] || "",
        autocomplete: "off", onContextmenu: selectAll,
        onInput: (e) => { obj[key] = e.target.value; if (onChange) onChange(); else render(); } }));
  }

  // A long press (or right click) on a text field selects all of it, as a phone's "select
  // all" does, so typing next replaces the text: touch has no ctrl+a to clear a field.
  function selectAll(e) {
    e.preventDefault();
    e.target.focus();
    e.target.select();
  }

  // Form controls bound to a plain object: typing updates the object, never re-renders.
  function input(obj, key, props = {}) {
    return h("input", { type: "text", autocomplete: "off", onContextmenu: selectAll, ...props, value: obj[key] ?? "",
      onInput: (e) => { obj[key] = e.target.value; if (props.onInput) props.onInput(e); } });
  }

  function textarea(obj, key, props = {}) {
    return h("textarea", { onContextmenu: selectAll, ...props, value: obj[key] ?? "",
      onInput: (e) => { obj[key] = e.target.value; if (props.onInput) props.onInput(e); } });
  }

  // A dropdown drawn in the page (native <select> popups are invisible in headless
  // screenshots, so an agent could not see the options it is choosing from).
  function select(obj, key, options, props = {}) {
    const id = props.id || `select-${key}`;
    const opts = options.map((o) => (Array.isArray(o) ? o : [o, o]));
    const current = opts.find((o) => String(o[0]) === String(obj[key] ?? "")) || opts[0];
    const open = ui.dropdown && ui.dropdown.id === id;
    const button = h("button", { type: "button", class: `dropdown ${props.class || ""}`, id, "aria-haspopup": "listbox",
      "aria-expanded": open ? "true" : "false", "aria-label": props["aria-label"] || null,
      onClick: (e) => {
        const r = e.currentTarget.getBoundingClientRect();
        ui.dropdown = open ? null : { id, rect: [r.left, r.top, r.bottom, r.width] };
        render();
      } },
    h("span", { class: "dropdown-value" }, current ? current[1] : ""), icon("down"));
    if (!open) return button;
    const [left, top, bottom, width] = ui.dropdown.rect;
    const below = window.innerHeight - bottom - 12;
    const place = below >= Math.min(240, opts.length * 36) || below >= top
      ? `top:${bottom + 4}px;max-height:${below}px` : `bottom:${window.innerHeight - top + 4}px;max-height:${top - 12}px`;
    const close = () => { ui.dropdown = null; render(); };
    return h("span", { class: "dropdown-wrap" }, button,
      h("div", { class: "dropdown-scrim", role: "presentation", onClick: close }),
      h("div", { class: "dropdown-menu", role: "listbox", "aria-label": props["aria-label"] || id,
        style: `left:${Math.min(left, window.innerWidth - Math.max(width, 160) - 8)}px;min-width:${Math.max(width, 160)}px;${place}` },
      opts.map(([value, label], i) => h("div", { role: "option", id: `${id}-option-${i}`,
        class: `dropdown-option${current && current[0] === value ? " selected" : ""}`,
        "aria-selected": current && current[0] === value ? "true" : "false",
        onClick: (e) => {
          e.stopPropagation();
          obj[key] = value;
          ui.dropdown = null;
          if (props.onChange) props.onChange({ target: { value } });
          render();
        } }, label))));
  }

  function field(label, control, error) {
    if (control && !control.hasAttribute("aria-label")) control.setAttribute("aria-label", label);
    return h("label", { class: "field" }, h("span", { class: "field-label" }, label), control,
      error ? h("span", { class: "field-error", role: "alert" }, error) : null);
  }

  function button(label, onClick, props = {}) {
    return h("button", { type: "button", class: props.class || "btn", ...props, onClick }, props.icon ? icon(props.icon) : null, label);
  }

  function iconButton(name, label, onClick, props = {}) {
    return h("button", { type: "button", class: "icon-btn", "aria-label": label, title: label, ...props, html: ICONS[name], onClick });
  }

  function icon(name) {
    return h("span", { class: "icon", "aria-hidden": "true", html: ICONS[name] || "" });
  }

  function modal(title, body, actions, { id, wide, onClose } = {}) {
    const close = onClose || closeOverlay;
    return h("div", { class: "scrim", role: "presentation", onClick: (e) => { if (e.target === e.currentTarget) close(); } },
      h("div", { class: `dialog${wide ? " wide" : ""}`, role: "dialog", "aria-label": title, id: id || null },
        h("div", { class: "dialog-head" }, h("h2", null, title), iconButton("close", "Close", close, { id: "dialog-close" })),
        h("div", { class: "dialog-body" }, body),
        actions ? h("div", { class: "dialog-actions" }, actions) : null));
  }

  function empty(text, iconName) {
    return h("div", { class: "empty" }, iconName ? h("span", { class: "empty-icon", html: ICONS[iconName] || "" }) : null, h("p", null, text));
  }

  // -- interaction helpers --------------------------------------------------------------
  // Long press (touch held >= 500 ms) opens the same context menu a right click does, and
  // a horizontal swipe raises swipeleft/swiperight on the element it started on.
  let touch = null;
  let lastTouch = null; // the touch that just ended, for the tap check below
  document.addEventListener("touchstart", (e) => {
    const t = e.touches[0];
    tapPending = false;
    touch = { x: t.clientX, y: t.clientY, at: e.timeStamp, target: e.target, moved: false, moves: 0 };
  }, { passive: true, capture: true });
  document.addEventListener("touchmove", (e) => {
    if (!touch) return;
    const t = e.touches[0];
    touch.moves += 1;
    if (Math.abs(t.clientX - touch.x) > 10 || Math.abs(t.clientY - touch.y) > 10) touch.moved = true;
    touch.lx = t.clientX;
    touch.ly = t.clientY;
  }, { passive: true, capture: true });
  document.addEventListener("touchend", (e) => {
    if (!touch) return;
    const t = touch;
    touch = null;
    lastTouch = t;
    if (!t.moved && e.timeStamp - t.at >= 500) {
      e.preventDefault();
      t.target.dispatchEvent(new MouseEvent("contextmenu", { bubbles: true, cancelable: true, clientX: t.x, clientY: t.y }));
      return;
    }
    if (t.moved && t.lx !== undefined) {
      const dx = t.lx - t.x;
      const dy = t.ly - t.y;
      if (Math.abs(dx) > 80 && Math.abs(dy) < 60) {
        t.target.dispatchEvent(new CustomEvent(dx < 0 ? "swipeleft" : "swiperight", { bubbles: true }));
      }
    }
  }, { passive: false, capture: true });
  // A touch that neither moved nor was claimed (long press) becomes a click that Chromium
  // sends a moment after the touch ends: until it arrives the screen is not the tap's.
  window.addEventListener("touchend", (e) => {
    const t = lastTouch;
    lastTouch = null;
    tapPending = !!t && t.moves === 0 && !e.defaultPrevented;
  }, { passive: true });
  for (const type of ["click", "contextmenu"]) window.addEventListener(type, () => { tapPending = false; }, true);
  window.addEventListener("beforeunload", () => { leaving = true; });

  document.addEventListener("click", (e) => {
    const a = e.target.closest && e.target.closest("a[href]");
    if (!a || e.defaultPrevented || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const href = a.getAttribute("href");
    if (href.startsWith("/")) {
      e.preventDefault();
      go(href);
    }
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && ui.dropdown) { ui.dropdown = null; render(); } else if (e.key === "Escape" && ui.overlay) closeOverlay();
  });
  window.addEventListener("popstate", () => { ui.overlay = null; ui.dropdown = null; render(); });
  // An open dropdown is positioned for the scroll offset it opened at: a scroll closes it.
  // Not the scroll event of render() putting a list back where it was (that fires a frame
  // later, and would close every dropdown opened in a scrolled list at once).
  document.addEventListener("scroll", (e) => {
    if (restoredScroll.get(e.target) === e.target.scrollTop) return;
    if (ui.dropdown && !(e.target.closest && e.target.closest(".dropdown-menu"))) { ui.dropdown = null; render(); }
  }, true);
  window.addEventListener("resize", () => render());

  // -- what the adapter sees (debug only; the policy gets pixels) ------------------------
  const INTERACTIVE = "a[href], button, input, textarea, select, summary, [role=button], [role=link], " +
    "[role=tab], [role=option], [role=checkbox], [role=menuitem], [role=switch], [contenteditable=true]";

  function labelOf(el) {
    const aria = el.getAttribute("aria-label");
    if (aria) return aria;
    if (el.labels && el.labels.length) {
      const text = el.labels[0].innerText.trim();
      if (text) return text.split("\n")[0];
    }
    const text = (el.innerText || el.textContent || "").replace(/\s+/g, " ").trim();
    return text || el.getAttribute("placeholder") || el.getAttribute("title") || el.getAttribute("alt") || el.value || "";
  }

  // The part of an element that shows: its box cut by the viewport and by every ancestor
  // that clips its overflow (a half-hidden row of a scrolled list is only the half that
  // shows, so the centre of what is reported lands on the row, not on the list's edge).
  // A fixed ancestor ends the walk: what is above it does not clip it. ``clips`` caches
  // each ancestor's {rect (null: it does not clip), fixed} for one scan; no ``clips`` (a
  // fixed element itself) means only the viewport cuts.
  function visibleBox(el, clips) {
    const r = el.getBoundingClientRect();
    let x0 = Math.max(r.left, 0), y0 = Math.max(r.top, 0);
    let x1 = Math.min(r.right, window.innerWidth), y1 = Math.min(r.bottom, window.innerHeight);
    if (!clips) return [x0, y0, x1, y1];
    for (let a = el.parentElement; a && a !== document.body && a !== document.documentElement; a = a.parentElement) {
      let clip = clips.get(a);
      if (!clip) {
        const style = getComputedStyle(a);
        let rect = null;
        if (style.overflowX !== "visible" || style.overflowY !== "visible") {
          const b = a.getBoundingClientRect();
          const left = b.left + a.clientLeft, top = b.top + a.clientTop;
          rect = [left, top, left + a.clientWidth, top + a.clientHeight];
        }
        clip = { rect, fixed: style.position === "fixed" };
        clips.set(a, clip);
      }
      if (clip.rect) {
        x0 = Math.max(x0, clip.rect[0]); y0 = Math.max(y0, clip.rect[1]);
        x1 = Math.min(x1, clip.rect[2]); y1 = Math.min(y1, clip.rect[3]);
      }
      if (clip.fixed) break;
    }
    return [x0, y0, x1, y1];
  }

  function elements() {
    const out = [];
    const clips = new Map();
    // Alerts and status lines are not clickable but tell a teacher what just happened.
    for (const el of document.querySelectorAll(`${INTERACTIVE}, [role=alert], [role=status]`)) {
      const style = getComputedStyle(el);
      const [x0, y0, x1, y1] = visibleBox(el, style.position === "fixed" ? null : clips);
      if (x1 - x0 < 2 || y1 - y0 < 2) continue;
      if (style.visibility === "hidden" || style.opacity === "0") continue;
      const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
      const hit = document.elementFromPoint(cx, cy);
      if (!hit || !(hit === el || el.contains(hit) || (hit.tagName === "LABEL" && hit.contains(el)))) continue;
      out.push({
        id: el.id || null,
        tag: el.tagName.toLowerCase(),
        role: el.getAttribute("role") || null,
        type: el.getAttribute("type") || null,
        label: labelOf(el).slice(0, 120),
        value: "value" in el && el.tagName !== "BUTTON" ? String(el.value).slice(0, 200) : null,
        checked: "checked" in el && (el.type === "checkbox" || el.type === "radio") ? el.checked : null,
        disabled: !!el.disabled,
        focused: el === document.activeElement,
        box: [Math.round(x0), Math.round(y0), Math.round(x1 - x0), Math.round(y1 - y0)],
      });
    }
    return out;
  }

  function focusInfo() {
    const el = document.activeElement;
    if (!el || el === document.body) return { editable: false, label: null };
    const textTypes = ["text", "search", "email", "tel", "url", "password", "number", "date", "time", ""];
    const editable = el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT" ||
      (el.tagName === "INPUT" && textTypes.includes((el.getAttribute("type") || "").toLowerCase()));
    return { editable, label: labelOf(el).slice(0, 80), id: el.id || null };
  }

  // The adapter's whole contract with the page.
  window.guiforge = {
    apps: () => order.slice(),
    getState: () => JSON.parse(JSON.stringify(state.apps)),
    // a fingerprint of the app state (FNV-1a over its JSON): per-step progress reads the
    // whole state only when this changes
    stateStamp() {
      const text = JSON.stringify(state.apps);
      let h = 0x811c9dc5;
      for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
      return `${text.length}:${(h >>> 0).toString(16)}`;
    },
    getSystem: () => JSON.parse(JSON.stringify(state.system)),
    // episode: the adapter's number for the reset that loads this state; it stays with the
    // state (a reload restores it), so a frame can show whose state is on screen
    loadState(appStates, system, start, owned = false, episode = null) {
      // owned: the caller parsed a fresh object for us, so no defensive copy is needed
      state = { apps: owned ? appStates || {} : JSON.parse(JSON.stringify(appStates || {})),
        system: { now: "2024-01-01T09:00:00", ...(system || {}), minutes: 0, seq: 0, episode } };
      tapPending = false;
      for (const name of order) app(name);
      ui = {};
      lastPath = null;
      localStorage.clear();
      sessionStorage.clear();
      for (const c of document.cookie.split(";")) {
        const name = c.split("=")[0].trim();
        if (name) document.cookie = `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`;
      }
      save();
      history.replaceState(null, "", start || "/");
      if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
      render();
      window.scrollTo(0, 0);
      return location.pathname;
    },
    open(appName) {
      if (!apps[appName]) return false;
      go(`/${appName}`);
      return true;
    },
    home() { go("/"); },
    go(to) { go(to); return location.pathname; },
    back: systemBack,
    elements,
    visibleBox,  // the grounding scan's too (guiforge/envs/web/grounding_scan.py)
    focusInfo,
    hit(x, y) {
      const el = document.elementFromPoint(x, y);
      if (!el) return null;
      const t = el.closest(INTERACTIVE + ", label");
      if (!t) return { interactive: false };
      return { interactive: true, label: labelOf(t).slice(0, 60), id: t.id || null };
    },
    path: () => location.pathname,
    episode: () => (state.system.episode === undefined ? null : state.system.episode),
    frameState: () => ({ app: true, renders, tap: tapPending, leaving, ready: document.readyState === "complete",
      episode: state.system.episode === undefined ? null : state.system.episode }),
  };

  document.addEventListener("DOMContentLoaded", () => { restore(); render(); });

  return { h, register, app, uiOf, save, commit, render, after, onRender, frameWith, systemBack, canGoBack, canGoForward,
    apps: () => apps, order: () => order.slice(), statusBar, system, nextId, tick, now, parse, iso, addDays, addMinutes,
    fmtTime, fmtDate, fmtStamp, money, initials, hue, avatar, path, go, overlay, openOverlay, closeOverlay,
    header, searchBox, input, textarea, select, field, button, iconButton, icon, modal, empty, mobile,
    MONTHS, DAYS };
})();
