// A task's presentation (guiforge/presentation.py): its theme on <html>, and the
// distractors that interrupt it (a cookie banner, a modal, a notification toast). They
// show after a number of the agent's clicks, never on a timer, and live in the system
// state, outside every app's state: the verifier never sees them.
"use strict";

(() => {
  const { h } = GF;
  const COOKIE = [
    ["We use cookies to keep you signed in and to understand how the site is used.", "Accept all", "Reject non-essential"],
    ["This site uses cookies for preferences and analytics. You can change your choice at any time.", "Allow cookies", "Only necessary"],
    ["Cookies help us improve your experience. Choose which ones we may use.", "Accept", "Decline optional cookies"],
  ];
  const DIALOG = [
    ["Turn on notifications?", "Get notified about new activity even when the app is closed.", "Turn on", "Not now"],
    ["What's new", "Search is faster and the sidebar can now be collapsed. Take a quick tour?", "Take the tour", "Skip"],
    ["Enjoying the app?", "Tell us what you think: rating takes a moment.", "Rate now", "Maybe later"],
    ["Stay in the loop", "Sign up for tips and product news by e-mail.", "Sign up", "No thanks"],
  ];
  const TOAST = [
    ["Backup complete", "Your data was backed up a moment ago.", "check"],
    ["Update available", "A new version will be installed on restart.", "down"],
    ["Storage almost full", "You have used 92% of your storage.", "box"],
    ["You're back online", "Changes will sync automatically.", "wifi"],
  ];

  let themeKey = null;
  let layerKey = null;
  let drawnFor = null; // the system state the layer was drawn from: a reset brings a new one

  function presentation() { return GF.system().presentation || {}; }

  function progress() {
    const sys = GF.system();
    if (!sys.distractors) sys.distractors = { clicks: 0, dismissed: [] };
    return sys.distractors;
  }

  function applyTheme() {
    const theme = presentation().theme || null;
    const key = JSON.stringify(theme);
    if (key === themeKey) return;
    themeKey = key;
    const root = document.documentElement;
    for (const attr of ["mode", "density", "font", "theme", "palette"]) delete root.dataset[attr];
    root.style.removeProperty("--accent");
    if (!theme) return;
    root.dataset.theme = theme.name || "";
    root.dataset.mode = theme.mode || "light";
    root.dataset.density = theme.density || "comfortable";
    root.dataset.font = theme.font || "sans";
    if (theme.palette) root.dataset.palette = theme.palette;
    if (theme.accent) root.style.setProperty("--accent", theme.accent);
  }

  // The distractors on screen now: due by the click count, not dismissed, inside an app
  // (the phone's home screen and the launcher show none).
  function showing() {
    const list = presentation().distractors || [];
    const done = progress();
    const inApp = GF.path().length > 0;
    if (!inApp) return [];
    return list.map((d, i) => ({ ...d, index: i }))
      .filter((d) => (d.after_clicks || 0) <= done.clicks && !done.dismissed.includes(d.index));
  }

  function dismiss(d, choice) {
    const done = progress();
    done.dismissed.push(d.index);
    done.choices = { ...(done.choices || {}), [d.kind]: choice };
    GF.save();
    draw();
  }

  function cookie(d) {
    const [text, accept, reject] = COOKIE[d.variant % COOKIE.length];
    return h("div", { class: "gf-cookie", role: "region", "aria-label": "Cookie consent", id: "gf-cookie" },
      h("p", null, text),
      h("div", { class: "row" },
        GF.button(reject, () => dismiss(d, "reject"), { class: "btn", id: "gf-cookie-reject" }),
        GF.button(accept, () => dismiss(d, "accept"), { class: "btn primary", id: "gf-cookie-accept" })));
  }

  function dialog(d) {
    const [title, text, yes, no] = DIALOG[d.variant % DIALOG.length];
    return h("div", { class: "scrim gf-modal", role: "presentation" },
      h("div", { class: "dialog", role: "dialog", "aria-label": title, id: "gf-dialog" },
        h("div", { class: "dialog-head" }, h("h2", null, title),
          GF.iconButton("close", `Close “${title}”`, () => dismiss(d, "close"), { id: "gf-dialog-close" })),
        h("div", { class: "dialog-body" }, h("p", null, text)),
        h("div", { class: "dialog-actions" },
          GF.button(no, () => dismiss(d, "decline"), { class: "btn", id: "gf-dialog-dismiss" }),
          GF.button(yes, () => dismiss(d, "accept"), { class: "btn primary", id: "gf-dialog-accept" }))));
  }

  function toast(d) {
    const [title, text, iconName] = TOAST[d.variant % TOAST.length];
    return h("div", { class: "gf-toast", role: "status", id: "gf-toast", "aria-label": `${title}. ${text}` },
      GF.icon(iconName),
      h("div", { class: "grow" }, h("strong", null, title), h("p", null, text)),
      GF.iconButton("close", "Dismiss notification", () => dismiss(d, "close"), { id: "gf-toast-close" }));
  }

  const DRAW = { cookie, dialog, toast };

  function draw() {
    applyTheme();
    const now = showing();
    const key = JSON.stringify([now, GF.mobile()]);
    let layer = document.getElementById("gf-layer");
    if (key === layerKey && layer && drawnFor === GF.system()) return;
    layerKey = key;
    drawnFor = GF.system();
    if (!layer) {
      layer = h("div", { id: "gf-layer" });
      document.body.appendChild(layer);
    }
    layer.replaceChildren(...now.map((d) => DRAW[d.kind](d)));
  }

  // Count the agent's clicks (taps arrive as clicks too); clicks on a distractor do not count.
  document.addEventListener("click", (e) => {
    if (e.target.closest && e.target.closest("#gf-layer")) return;
    if (!(presentation().distractors || []).length) return;
    progress().clicks += 1;
    GF.save();
    draw();
  }, true);
  // Escape closes a modal distractor before it reaches the app (which would close its own).
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape") return;
    const modal = showing().find((d) => d.kind === "dialog");
    if (!modal) return;
    e.stopPropagation();
    dismiss(modal, "close");
  }, true);

  GF.onRender(draw);
})();
