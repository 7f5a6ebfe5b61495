// Bank: accounts, transactions with search and categories, a transfer form with a review
// step. State: {bank, currency, accounts, transactions, categories, payees, transfers}.
"use strict";

(() => {
  const { h } = GF;
  const S = () => GF.app("bank");
  const U = () => GF.uiOf("bank", () => ({ query: "", category: "", transfer: null }));
  const money = (n) => GF.money(n, S().currency);
  const account = (id) => S().accounts.find((a) => a.id === id);
  const mask = (num) => `•••• ${String(num).slice(-4)}`;

  function txRows(list, withAccount) {
    const s = S();
    return h("table", { class: "data tx-table" },
      h("thead", null, h("tr", null, h("th", null, "Date"), h("th", null, "Description"), withAccount ? h("th", { class: "hide-mobile" }, "Account") : null,
        h("th", null, "Category"), h("th", { class: "num" }, "Amount"))),
      h("tbody", null, list.map((t) => h("tr", { id: `tx-${t.id}` },
        h("td", { class: "nowrap" }, GF.fmtDate(t.date).replace(/, \d{4}$/, "")),
        h("td", null, h("div", { class: "payee" }, t.payee), t.memo ? h("div", { class: "faint small" }, t.memo) : null),
        withAccount ? h("td", { class: "hide-mobile faint" }, account(t.account) ? account(t.account).name : t.account) : null,
        h("td", null, GF.select(t, "category", [["", "Uncategorized"], ...s.categories.map((c) => [c, c])],
          { class: `cat-select${t.category ? "" : " unset"}`, id: `category-${t.id}`, "aria-label": `Category for ${t.payee}`, onChange: () => GF.save() })),
        h("td", { class: `num ${t.amount > 0 ? "amount-in" : ""}` }, t.amount > 0 ? `+${money(t.amount)}` : money(t.amount))))));
  }

  function sorted(list) {
    return list.slice().sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : a.id < b.id ? 1 : -1));
  }

  function overview() {
    const s = S();
    const recent = sorted(s.transactions).slice(0, 6);
    const uncategorized = s.transactions.filter((t) => !t.category).length;
    return h("div", { class: "bank-page" },
      h("div", { class: "row" }, h("h1", { class: "grow" }, "Accounts"),
        GF.button("Transfer money", () => startTransfer(), { class: "btn primary", id: "transfer-start", icon: "transfer" })),
      h("div", { class: "accounts" }, s.accounts.map((a) => h("a", { class: `account-card ${a.type}`, href: `/bank/account/${a.id}`, id: `account-${a.id}`,
        "aria-label": `${a.name} ${money(a.balance)}` },
      h("span", { class: "account-name" }, a.name), h("span", { class: "account-no" }, mask(a.number)),
      h("span", { class: "account-balance" }, money(a.balance)), h("span", { class: "account-label" }, "Available balance")))),
      uncategorized ? h("div", { class: "hint" }, GF.icon("tag"), `${uncategorized} transaction${uncategorized > 1 ? "s" : ""} need a category.`) : null,
      h("div", { class: "card" }, h("div", { class: "card-head" }, h("h2", null, "Recent activity"),
        h("a", { href: `/bank/account/${s.accounts[0] ? s.accounts[0].id : ""}`, class: "link", id: "see-all" }, "See all")),
      txRows(recent, true)));
  }

  function accountPage(id) {
    const a = account(id);
    if (!a) return GF.empty("Account not found", "bank");
    const u = U();
    const q = u.query.trim().toLowerCase();
    const list = sorted(S().transactions.filter((t) => t.account === id &&
      (!q || `${t.payee} ${t.memo} ${t.category}`.toLowerCase().includes(q)) &&
      (!u.category || (u.category === "none" ? !t.category : t.category === u.category))));
    return h("div", { class: "bank-page" },
      h("div", { class: "account-hero" }, h("div", null, h("div", { class: "faint" }, `${a.name} · ${mask(a.number)}`),
        h("div", { class: "hero-balance" }, money(a.balance))),
      GF.button("Transfer", () => startTransfer(a.id), { class: "btn primary", id: "transfer-from-account", icon: "transfer" })),
      h("div", { class: "row wrap tx-filters" },
        h("label", { class: "search small-search" }, h("span", { class: "search-icon", html: ICONS.search }),
          GF.input(u, "query", { id: "tx-search", type: "search", placeholder: "Search transactions", "aria-label": "Search transactions", onInput: () => GF.render() })),
        GF.select(u, "category", [["", "All categories"], ["none", "Uncategorized"], ...S().categories.map((c) => [c, c])],
          { id: "tx-category-filter", "aria-label": "Filter by category", onChange: () => GF.render() })),
      h("div", { class: "card" }, list.length ? txRows(list, false) : GF.empty("No transactions match", "search")));
  }

  // -- transfers ----------------------------------------------------------------------------
  function newTransfer(from) {
    const s = S();
    return { from: from || (s.accounts[0] ? s.accounts[0].id : ""), to: "", new_name: "", new_iban: "", save_payee: true,
      amount: "", date: GF.now().slice(0, 10), reference: "", error: null };
  }

  function startTransfer(from) {
    U().transfer = newTransfer(from);
    GF.go("/bank/transfer");
  }

  function destination(t) {
    if (t.to === "new") return { kind: "new", id: null, name: t.new_name.trim(), iban: t.new_iban.trim() };
    if (t.to.startsWith("acc-")) { const a = account(t.to); return a ? { kind: "account", id: a.id, name: a.name, iban: a.number } : null; }
    const p = S().payees.find((x) => x.id === t.to);
    return p ? { kind: "payee", id: p.id, name: p.name, iban: p.iban } : null;
  }

  function validate(t) {
    const amount = Number(String(t.amount).replace(/[^0-9.]/g, ""));
    const from = account(t.from);
    const to = destination(t);
    if (!from) return "Choose the account to pay from.";
    if (!to) return "Choose who to pay.";
    if (to.kind === "new" && !to.name) return "Enter the new payee's name.";
    if (to.kind === "new" && !/^[A-Z]{2}\d{2}[A-Z0-9 ]{8,}$/i.test(to.iban)) return "Enter a valid IBAN, e.g. GB29 NWBK 6016 1331 9268 19.";
    if (to.kind === "account" && to.id === from.id) return "Choose a different account to transfer to.";
    if (!(amount > 0) || !/^\s*[^0-9]*\d+(\.\d{1,2})?\s*$/.test(String(t.amount).replace(/,/g, ""))) return "Enter an amount, e.g. 250.00.";
    if (amount > from.balance) return `Insufficient funds: ${from.name} has ${money(from.balance)}.`;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(t.date.trim())) return "Date must look like 2024-05-20.";
    return null;
  }

  function transferForm() {
    const s = S();
    if (!U().transfer) U().transfer = newTransfer();
    const t = U().transfer;
    const options = [["", "Choose payee or account"], ...s.accounts.filter((a) => a.id !== t.from).map((a) => [a.id, `${a.name} (${mask(a.number)})`]),
      ...s.payees.map((p) => [p.id, p.name]), ["new", "+ New payee…"]];
    return h("div", { class: "bank-page narrow-form" },
      h("h1", null, "Transfer money"),
      t.error ? h("div", { class: "error-banner", role: "alert", id: "transfer-error" }, t.error) : null,
      h("div", { class: "card pad form" },
        GF.field("From", GF.select(t, "from", s.accounts.map((a) => [a.id, `${a.name} — ${money(a.balance)}`]), { id: "transfer-from", onChange: () => GF.render() })),
        GF.field("To", GF.select(t, "to", options, { id: "transfer-to", onChange: () => GF.render() })),
        t.to === "new" ? h("div", { class: "form-grid" },
          GF.field("Payee name", GF.input(t, "new_name", { id: "payee-name" })),
          GF.field("IBAN", GF.input(t, "new_iban", { id: "payee-iban", placeholder: "GB29 NWBK 6016 1331 9268 19" })),
          h("label", { class: "check full" }, h("input", { type: "checkbox", id: "payee-save", checked: t.save_payee,
            onChange: (e) => { t.save_payee = e.target.checked; } }), h("span", null, "Save this payee"))) : null,
        h("div", { class: "form-grid" },
          GF.field(`Amount (${s.currency})`, GF.input(t, "amount", { id: "transfer-amount", placeholder: "0.00", inputmode: "decimal" })),
          GF.field("Date", GF.input(t, "date", { id: "transfer-date", placeholder: "YYYY-MM-DD" }))),
        GF.field("Reference", GF.input(t, "reference", { id: "transfer-reference", placeholder: "What's it for?" })),
        h("div", { class: "row form-actions" },
          GF.button("Cancel", () => { U().transfer = null; GF.go("/bank", true); }, { id: "transfer-cancel" }),
          GF.button("Review transfer", () => {
            t.error = validate(t);
            if (t.error) GF.render(); else GF.go("/bank/transfer/review");
          }, { class: "btn primary", id: "transfer-review" }))));
  }

  function reviewPage() {
    const t = U().transfer;
    if (!t || validate(t)) return transferForm();
    const to = destination(t);
    const from = account(t.from);
    const amount = Math.round(Number(String(t.amount).replace(/[^0-9.]/g, "")) * 100) / 100;
    const line = (k, v, id) => h("div", { class: "review-line" }, h("span", { class: "faint" }, k), h("strong", { id }, v));
    return h("div", { class: "bank-page narrow-form" },
      h("h1", null, "Review transfer"),
      h("div", { class: "card pad review" },
        line("Amount", money(amount), "review-amount"), line("From", `${from.name} (${mask(from.number)})`),
        line("To", to.name, "review-to"), line("Account / IBAN", to.kind === "account" ? mask(to.iban) : to.iban),
        line("Date", GF.fmtDate(t.date, "long")), line("Reference", t.reference || "—")),
      h("div", { class: "row form-actions" },
        GF.button("Edit", () => GF.go("/bank/transfer", true), { id: "transfer-edit" }),
        GF.button("Confirm transfer", () => confirm(t, to, from, amount), { class: "btn primary", id: "transfer-confirm" })));
  }

  function confirm(t, to, from, amount) {
    const s = S();
    const id = GF.nextId("tr");
    const created = GF.tick();
    from.balance = Math.round((from.balance - amount) * 100) / 100;
    s.transactions.push({ id: `${id}-out`, account: from.id, date: t.date, payee: to.name, amount: -amount, category: "Transfer", memo: t.reference });
    if (to.kind === "account") {
      const dest = account(to.id);
      dest.balance = Math.round((dest.balance + amount) * 100) / 100;
      s.transactions.push({ id: `${id}-in`, account: dest.id, date: t.date, payee: from.name, amount, category: "Transfer", memo: t.reference });
    }
    if (to.kind === "new" && t.save_payee) s.payees.push({ id: GF.nextId("payee"), name: to.name, iban: to.iban });
    s.transfers.push({ id, from: from.id, to_kind: to.kind, to_id: to.id, to_name: to.name, to_iban: to.iban, amount, currency: s.currency,
      date: t.date, reference: t.reference, created_at: created, status: "Completed" });
    U().transfer = null;
    GF.save();
    GF.go(`/bank/done/${id}`, true);
  }

  function donePage(id) {
    const tr = S().transfers.find((x) => x.id === id);
    if (!tr) return GF.empty("Transfer not found", "transfer");
    return h("div", { class: "bank-page narrow-form" },
      h("div", { class: "done" }, h("span", { class: "done-icon", html: ICONS.check }), h("h1", null, "Transfer complete"),
        h("p", { id: "done-summary" }, `${money(tr.amount)} sent to ${tr.to_name} on ${GF.fmtDate(tr.date, "long")}.`),
        h("p", { class: "faint" }, `Reference: ${tr.reference || "—"} · Confirmation ${tr.id.toUpperCase()}`),
        GF.button("Back to accounts", () => GF.go("/bank"), { class: "btn primary", id: "done-back" })));
  }

  function render(route) {
    const [page, arg] = route;
    let content;
    if (page === "account") content = accountPage(arg);
    else if (page === "transfer" && arg === "review") content = reviewPage();
    else if (page === "transfer") content = transferForm();
    else if (page === "done") content = donePage(arg);
    else content = overview();
    const nav = [["", "Accounts", "home"], ["transfer", "Transfer", "transfer"]];
    return [
      GF.header("bank", { title: S().bank,
        leading: GF.mobile() && page ? GF.iconButton("back", "Back", () => GF.go("/bank"), { id: "mobile-back" }) : null }),
      h("div", { class: "body" },
        GF.mobile() ? null : h("nav", { class: "sidebar", "aria-label": "Banking" }, nav.map(([p, label, icon]) =>
          h("a", { class: `nav-item${(page || "") === p || (p === "" && page === "account") ? " active" : ""}`, href: `/bank${p ? `/${p}` : ""}`, id: `nav-${label.toLowerCase()}`,
            onClick: p === "transfer" ? (e) => { e.preventDefault(); startTransfer(); } : null }, GF.icon(icon), label))),
        h("main", { class: "main bank-main", "data-keep-scroll": `bank-${page || "home"}` }, content)),
    ];
  }

  GF.register("bank", {
    title: "Bank", icon: "bank", color: "#00695c",
    empty: () => ({ bank: "Bank", currency: "USD", accounts: [], transactions: [], categories: [], payees: [], transfers: [] }),
    render,
  });
})();
