// The screens around the apps (guiforge.presentation: browser, phone): a browser's tab
// strip and toolbar above the web apps, a phone's status bar and navigation bar around the
// mobile ones. They are drawn inside the page, in the layout above and below the app, so
// the screenshot, the element scan and every click share one coordinate space, and their
// controls work: back and forward walk the history, the address bar opens what is typed,
// a tab switches to its page, the phone's buttons go back, home and to recent apps. Times
// and the battery come from the world's clock (GF.now), never from the host's.
"use strict";

(() => {
  const { h } = GF;
  const HOST = "apps.guiforge.test";
  const BLOCKED = "This site can't be reached: only the local apps are available here.";

  function screen() { return GF.system().presentation || {}; }
  function current() { const p = GF.path(); return p.length && GF.apps()[p[0]] ? p[0] : null; }
  function title(path) {
    const name = path.split("/").filter(Boolean)[0];
    const def = name && GF.apps()[name];
    return def ? def.title : "New Tab";
  }

  // -- the browser -------------------------------------------------------------------------
  // Tabs live in the system state (a reload keeps them, the verifier never reads them): the
  // task's page plus ``tabs`` other apps the person had open, drawn from the app order.
  function tabs() {
    const sys = GF.system();
    if (!sys.browser) {
      const spec = screen().browser || {};
      const order = GF.order().filter((n) => n !== current());
      const start = spec.offset || 0;
      const task = (spec.apps || []).filter((n) => order.includes(n)); // the task's other apps come first
      const drawn = order.map((_, i) => order[(start + i) % order.length]);
      const names = [...new Set([...task, ...drawn])].slice(0, Math.max(spec.tabs || 0, task.length));
      const others = names.map((n) => `/${n}`);
      const at = Math.min(start % (others.length + 1), others.length);
      others.splice(at, 0, location.pathname);
      sys.browser = { tabs: others, active: at, typed: null, blocked: false, at: location.pathname };
    }
    if (sys.browser.at !== location.pathname) { // a new page: the error page and typed text go
      sys.browser.at = location.pathname;
      sys.browser.blocked = false;
      sys.browser.typed = null;
    }
    sys.browser.tabs[sys.browser.active] = location.pathname; // the active tab shows this page
    return sys.browser;
  }

  function switchTab(i) {
    const b = tabs();
    if (i === b.active) return;
    b.active = i;
    b.typed = null;
    GF.go(b.tabs[i]);
  }

  function newTab() {
    const b = tabs();
    b.tabs.push("/");
    b.active = b.tabs.length - 1;
    b.typed = null;
    GF.go("/");
  }

  // What the address bar opens: an app's name, a path, or a URL on the apps' own host.
  function target(text) {
    const t = text.trim();
    if (GF.apps()[t.toLowerCase()]) return `/${t.toLowerCase()}`;
    if (t.startsWith("/")) return t;
    const m = /^(?:https?:\/\/)?([^/\s]+)(\/\S*)?$/i.exec(t);
    return m && m[1].toLowerCase() === HOST ? m[2] || "/" : null;
  }

  function submit(input) {
    const b = tabs();
    const to = target(input.value);
    b.typed = null;
    b.blocked = to === null;
    input.blur();
    if (to !== null) GF.go(to);
    else GF.render();
  }

  function browser(view) {
    const b = tabs();
    const url = `${HOST}${location.pathname}`;
    const strip = h("div", { class: "gf-tabstrip", role: "tablist", "aria-label": "Tabs" },
      b.tabs.map((path, i) => {
        const name = path.split("/").filter(Boolean)[0];
        const def = name && GF.apps()[name];
        return h("div", { class: `gf-tab${i === b.active ? " active" : ""}`, role: "tab", id: `gf-tab-${i}`,
          "aria-selected": i === b.active ? "true" : "false", "aria-label": title(path), onClick: () => switchTab(i) },
        h("span", { class: "gf-favicon", style: def ? `background:${def.color}` : "", html: def ? ICONS[def.icon] || "" : ICONS.grid }),
        h("span", { class: "gf-tab-title" }, title(path)));
      }),
      h("button", { class: "gf-chrome-btn", id: "gf-new-tab", "aria-label": "New tab", html: ICONS.plus, onClick: newTab }));
    const bar = h("div", { class: "gf-toolbar" },
      h("button", { class: "gf-chrome-btn", id: "gf-back", "aria-label": "Back", html: ICONS.arrowLeft,
        disabled: !GF.canGoBack(), onClick: () => history.back() }),
      h("button", { class: "gf-chrome-btn", id: "gf-forward", "aria-label": "Forward", html: ICONS.arrowRight,
        disabled: !GF.canGoForward(), onClick: () => history.forward() }),
      h("button", { class: "gf-chrome-btn", id: "gf-reload", "aria-label": "Reload", html: ICONS.reload,
        onClick: () => { b.blocked = false; GF.render(); } }),
      h("label", { class: "gf-omnibox" },
        h("span", { class: "gf-omnibox-info", "aria-hidden": "true" }, "Not secure"),
        h("input", { id: "gf-address", type: "text", "aria-label": "Address and search bar", autocomplete: "off",
          spellcheck: "false", value: b.typed === null ? url : b.typed,
          onFocus: (e) => e.target.select(),
          onInput: (e) => { b.typed = e.target.value; },
          onKeydown: (e) => {
            if (e.key === "Enter") { e.preventDefault(); submit(e.target); }
            if (e.key === "Escape") { b.typed = null; e.target.blur(); GF.render(); }
          } })));
    const page = b.blocked
      ? h("div", { class: "gf-blocked", role: "alert" }, h("h2", null, "This site can't be reached"), h("p", null, BLOCKED))
      : view;
    return [h("div", { class: "gf-browser" }, strip, bar), page];
  }

  // -- the phone ---------------------------------------------------------------------------
  // Minutes since the episode began on the world's clock drain the battery by one point per 10.
  function battery(level) {
    const drained = Math.floor((GF.system().minutes || 0) / 10);
    return Math.max(1, Math.min(100, level - drained));
  }

  function notices() {
    const out = [];
    const mail = GF.app("mail");
    if ((mail.inbox || []).some((m) => !m.read)) out.push("mail");
    const chat = GF.app("chat");
    if ((chat.threads || []).some((t) => t.unread)) out.push("chat");
    return out;
  }

  function statusBar(spec) {
    const time = GF.fmtTime(GF.now()).replace(/ (AM|PM)$/, "");
    const level = battery(spec.battery || 80);
    return h("div", { class: "statusbar gf-statusbar", "aria-hidden": "true" },
      h("span", { class: "statusbar-left" }, h("span", null, time),
        notices().map((n) => h("span", { class: "gf-notice", html: ICONS[n] || "" }))),
      h("span", { class: "statusbar-icons" },
        h("span", { html: ICONS.wifi + ICONS.signal }),
        h("span", { class: `gf-battery${level <= 15 ? " low" : ""}` },
          h("span", { class: "gf-battery-cell" }, h("span", { style: `width:${level}%` })), `${level}%`)));
  }

  function back() {
    if (GF.systemBack() === "closed") return;
    if (GF.canGoBack()) history.back();
    else if (GF.path().length) GF.go("/");
  }

  function recents() {
    const sys = GF.system();
    const seen = (sys.recents || []).filter((n) => GF.apps()[n]);
    const close = () => { sys.showRecents = false; GF.render(); };
    return h("div", { class: "gf-recents", role: "dialog", "aria-label": "Recent apps", onClick: (e) => { if (e.target === e.currentTarget) close(); } },
      seen.length ? seen.slice().reverse().map((n) => h("a", { class: "gf-recent", href: `/${n}`, id: `gf-recent-${n}`,
        onClick: () => { sys.showRecents = false; } },
      h("span", { class: "launcher-icon small", style: `background:${GF.apps()[n].color}`, html: ICONS[GF.apps()[n].icon] || "" }),
      GF.apps()[n].title)) : h("p", { class: "gf-recents-empty" }, "No recent items"));
  }

  function navBar(spec) {
    if (spec.nav !== "buttons") return h("div", { class: "gf-navbar gesture", "aria-hidden": "true" }, h("span", { class: "gf-pill" }));
    const sys = GF.system();
    return h("div", { class: "gf-navbar buttons", role: "navigation", "aria-label": "System navigation" },
      h("button", { class: "gf-nav-btn", id: "gf-nav-back", "aria-label": "Back", html: ICONS.navBack, onClick: back }),
      h("button", { class: "gf-nav-btn", id: "gf-nav-home", "aria-label": "Home", html: ICONS.navHome,
        onClick: () => { sys.showRecents = false; GF.go("/"); } }),
      h("button", { class: "gf-nav-btn", id: "gf-nav-recents", "aria-label": "Recent apps", html: ICONS.navRecents,
        onClick: () => { sys.showRecents = !sys.showRecents; GF.render(); } }));
  }

  function phone(view, spec) {
    const sys = GF.system();
    const app = current();
    if (app) sys.recents = [...(sys.recents || []).filter((n) => n !== app), app];
    const shown = sys.showRecents && spec.nav === "buttons" ? recents() : view;
    return [statusBar(spec), shown, navBar(spec)];
  }

  GF.frameWith((view) => {
    const spec = screen();
    const root = document.documentElement;
    const kind = GF.mobile() ? (spec.phone ? "phone" : null) : (spec.browser ? "browser" : null);
    if (kind) root.dataset.screen = kind; else delete root.dataset.screen;
    if (kind === "phone" && spec.phone.nav === "buttons") root.dataset.nav = "buttons"; else delete root.dataset.nav;
    if (kind === "browser") return browser(view);
    if (kind === "phone") return phone(view, spec.phone);
    return null;
  });
})();
