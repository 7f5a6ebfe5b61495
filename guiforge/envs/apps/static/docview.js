// A read-only document viewer for attachments: invoices, receipts, spreadsheets, slides,
// text and forms, rendered from the document JSON the preparer put in the app state.
"use strict";

const DocView = (() => {
  const { h } = GF;

  function size(bytes) {
    if (bytes >= 1048576) return `${(bytes / 1048576).toFixed(1)} MB`;
    return `${Math.max(1, Math.round(bytes / 1024))} KB`;
  }

  function kindIcon(file) {
    if (file.sheets && file.sheets.length) return "table";
    if (file.slides && file.slides.length) return "slides";
    return "doc";
  }

  function cell(v, currency, numeric) {
    if (v === null || v === undefined) return "";
    if (typeof v === "number" && numeric) return Number.isInteger(v) ? String(v) : v.toFixed(2);
    return String(v);
  }

  function lineItems(file) {
    const cur = file.currency;
    const rows = file.line_items.map((li) => h("tr", null,
      h("td", null, li.description),
      h("td", { class: "num" }, cell(li.quantity, cur, true)),
      h("td", { class: "num" }, GF.money(li.unit_price, cur)),
      h("td", { class: "num" }, GF.money(li.amount, cur))));
    const totals = [];
    if (file.subtotal !== undefined && file.subtotal !== null) totals.push(["Subtotal", file.subtotal]);
    if (file.tax) totals.push([`Tax (${(file.tax_rate * 100).toFixed(file.tax_rate * 100 % 1 ? 1 : 0)}%)`, file.tax]);
    if (file.total !== undefined && file.total !== null) totals.push(["Total", file.total]);
    return h("table", { class: "data doc-table" },
      h("thead", null, h("tr", null, h("th", null, "Description"), h("th", { class: "num" }, "Qty"),
        h("th", { class: "num" }, "Unit price"), h("th", { class: "num" }, "Amount"))),
      h("tbody", null, rows),
      h("tfoot", null, totals.map(([label, value]) => h("tr", { class: label === "Total" ? "doc-total" : "" },
        h("td", { colspan: "3", class: "num" }, label), h("td", { class: "num" }, GF.money(value, cur))))));
  }

  function sheet(s, cur) {
    return h("div", { class: "doc-sheet" },
      h("table", { class: "data doc-table" },
        h("thead", null, h("tr", null, s.columns.map((c) => h("th", null, c)))),
        h("tbody", null, s.rows.map((r) => h("tr", null, r.map((v) => h("td", { class: typeof v === "number" ? "num" : "" }, cell(v, cur, true))))))));
  }

  function render(file, ui) {
    const parts = [];
    parts.push(h("h1", { class: "doc-title" }, file.title || file.filename));
    if (file.author_name) parts.push(h("p", { class: "muted" }, `From ${file.author_name}`));
    const fields = Object.entries(file.fields || {});
    if (fields.length) {
      parts.push(h("dl", { class: "doc-fields" }, fields.map(([k, v]) => [h("dt", null, k), h("dd", null, v)])));
    }
    for (const p of file.paragraphs || []) parts.push(h("p", { class: "doc-para" }, p));
    if (file.line_items && file.line_items.length) parts.push(lineItems(file));
    if (file.sheets && file.sheets.length) {
      const idx = Math.min(ui.sheet || 0, file.sheets.length - 1);
      if (file.sheets.length > 1) {
        parts.push(h("div", { class: "tabs", role: "tablist" }, file.sheets.map((s, i) =>
          h("button", { class: `tab${i === idx ? " active" : ""}`, role: "tab", id: `sheet-tab-${i}`,
            onClick: () => { ui.sheet = i; GF.render(); } }, s.name))));
      }
      parts.push(sheet(file.sheets[idx], file.currency));
    }
    for (const [i, s] of (file.slides || []).entries()) {
      parts.push(h("section", { class: "doc-slide" },
        h("div", { class: "doc-slide-no" }, `Slide ${i + 1}`),
        h("h2", null, s.title),
        s.bullets.length ? h("ul", null, s.bullets.map((b) => h("li", null, b))) : null));
    }
    return h("div", { class: "doc-paper", id: "document-view", "data-keep-scroll": "doc" }, parts);
  }

  // The full-screen viewer overlay with a file header and a close button.
  function viewer(file, ui, onClose) {
    return h("div", { class: "viewer", role: "dialog", "aria-label": `Viewing ${file.filename}` },
      h("div", { class: "viewer-bar" },
        GF.iconButton("back", "Close viewer", onClose, { id: "viewer-close" }),
        h("span", { class: "icon", html: ICONS[kindIcon(file)] }),
        h("span", { class: "viewer-name ellipsis" }, file.filename),
        h("span", { class: "viewer-size" }, size(file.size || 0))),
      h("div", { class: "viewer-stage", "data-keep-scroll": "viewer" }, render(file, ui)));
  }

  return { viewer, render, size, kindIcon };
})();
