// Shop: search, filters and sorting, product pages, a cart, checkout with a form, orders.
// State: {store, currency, tax_rate, free_shipping_over, catalog, cart: [{sku, qty}], orders, profile}.
"use strict";

(() => {
  const { h } = GF;
  const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
  const PRICE_BANDS = [["", "Any price"], ["0-25", "Under 25"], ["25-50", "25 to 50"], ["50-100", "50 to 100"], ["100-", "100 and above"]];
  const EXPRESS = 14.99;
  const STANDARD = 4.99;
  const S = () => GF.app("shop");
  const U = () => GF.uiOf("shop", () => ({ query: "", categories: [], brands: [], price: "", rating: false, inStock: false,
    sort: "relevance", qty: {}, checkout: null, filters: false }));
  const money = (n) => GF.money(n, S().currency);
  const product = (sku) => S().catalog.find((p) => p.sku === sku);

  function results() {
    const u = U();
    const words = u.query.trim().toLowerCase().split(/\s+/).filter(Boolean);
    let list = S().catalog.filter((p) => {
      const text = `${p.name} ${p.brand} ${p.category} ${p.description}`.toLowerCase();
      if (!words.every((w) => text.includes(w))) return false;
      if (u.categories.length && !u.categories.includes(p.category)) return false;
      if (u.brands.length && !u.brands.includes(p.brand)) return false;
      if (u.rating && p.rating < 4) return false;
      if (u.inStock && p.stock <= 0) return false;
      if (u.price) {
        const [lo, hi] = u.price.split("-").map((x) => (x === "" ? null : +x));
        if (lo !== null && p.price < lo) return false;
        if (hi !== null && p.price >= hi) return false;
      }
      return true;
    });
    const by = { "price-asc": (a, b) => a.price - b.price, "price-desc": (a, b) => b.price - a.price,
      rating: (a, b) => b.rating - a.rating || a.order - b.order, relevance: (a, b) => a.order - b.order };
    list = list.slice().sort(by[u.sort] || by.relevance);
    return list;
  }

  function image(p, size) {
    return h("div", { class: `product-img ${size || ""}`, style: `background:hsl(${p.hue},55%,92%);color:hsl(${p.hue},45%,38%)`,
      "aria-hidden": "true", html: ICONS[p.icon] || ICONS.box });
  }

  function stars(p) {
    const full = Math.round(p.rating);
    return h("span", { class: "stars", "aria-label": `${p.rating} out of 5 stars` }, "★".repeat(full) + "☆".repeat(5 - full),
      h("span", { class: "faint" }, ` ${p.rating} (${p.reviews})`));
  }

  function cartCount() { return S().cart.reduce((n, i) => n + i.qty, 0); }

  function addToCart(sku, qty) {
    const p = product(sku);
    const line = S().cart.find((i) => i.sku === sku);
    const have = line ? line.qty : 0;
    const n = Math.min(qty, p.stock - have);
    if (n <= 0) return false;
    if (line) line.qty += n;
    else S().cart.push({ sku, qty: n });
    return true;
  }

  function totals(delivery) {
    const s = S();
    const subtotal = round2(s.cart.reduce((sum, i) => sum + product(i.sku).price * i.qty, 0));
    const shipping = !s.cart.length ? 0 : delivery === "express" ? EXPRESS : subtotal >= s.free_shipping_over ? 0 : STANDARD;
    const tax = round2(subtotal * s.tax_rate);
    return { subtotal, shipping, tax, total: round2(subtotal + shipping + tax) };
  }

  function round2(n) { return Math.round(n * 100) / 100; }

  // -- browse -------------------------------------------------------------------------------
  function filterPanel() {
    const u = U();
    const cats = [...new Set(S().catalog.map((p) => p.category))].sort();
    const brands = [...new Set(S().catalog.map((p) => p.brand))].sort();
    const toggle = (list, v) => () => { const i = list.indexOf(v); if (i >= 0) list.splice(i, 1); else list.push(v); GF.render(); };
    const box = (id, label, on, onChange) => h("label", { class: "check" },
      h("input", { type: "checkbox", id, checked: on, onChange }), h("span", null, label));
    return h("aside", { class: `filters${u.filters ? " open" : ""}`, "aria-label": "Filters" },
      h("h3", null, "Category"), cats.map((c) => box(`filter-cat-${c.toLowerCase()}`, c, u.categories.includes(c), toggle(u.categories, c))),
      h("h3", null, "Price"), PRICE_BANDS.map(([v, label]) => h("label", { class: "check" },
        h("input", { type: "radio", name: "price", id: `filter-price-${v || "any"}`, checked: u.price === v,
          onChange: () => { u.price = v; GF.render(); } }), h("span", null, label))),
      h("h3", null, "Brand"), brands.map((b) => box(`filter-brand-${b.toLowerCase().replace(/\W+/g, "-")}`, b, u.brands.includes(b), toggle(u.brands, b))),
      h("h3", null, "More"),
      box("filter-rating", "4 stars & up", u.rating, () => { u.rating = !u.rating; GF.render(); }),
      box("filter-in-stock", "In stock only", u.inStock, () => { u.inStock = !u.inStock; GF.render(); }),
      GF.button("Clear filters", () => { Object.assign(u, { categories: [], brands: [], price: "", rating: false, inStock: false }); GF.render(); },
        { id: "filter-clear", class: "btn clear-btn" }));
  }

  function card(p) {
    return h("div", { class: "product-card" },
      h("a", { href: `/shop/product/${p.sku}`, id: `product-${p.sku}`, class: "product-link", "aria-label": `${p.name}, ${money(p.price)}` },
        image(p), h("div", { class: "product-name" }, p.name)),
      stars(p),
      h("div", { class: "row" }, h("strong", { class: "price grow" }, money(p.price)),
        p.stock > 0 ? GF.button("Add to cart", () => { addToCart(p.sku, 1); U().toast = `Added “${p.name}” to your cart`; GF.commit(); },
          { id: `add-${p.sku}`, class: "btn small", "aria-label": `Add ${p.name} to cart` })
          : h("span", { class: "out" }, "Out of stock")));
  }

  function browse() {
    const u = U();
    const list = results();
    const toast = u.toast;
    u.toast = null;
    return h("div", { class: "shop-browse" },
      filterPanel(),
      h("section", { class: "results", "data-keep-scroll": "results" },
        toast ? h("div", { class: "ok-banner", role: "status" }, toast) : null,
        h("div", { class: "results-head" },
          h("span", { class: "muted", id: "result-count" }, `${list.length} result${list.length === 1 ? "" : "s"}${u.query ? ` for “${u.query}”` : ""}`),
          h("span", { class: "spacer" }),
          GF.mobile() ? GF.button("Filters", () => { u.filters = !u.filters; GF.render(); }, { id: "toggle-filters", icon: "filter" }) : null,
          h("label", { class: "row sort" }, h("span", { class: "muted hide-mobile" }, "Sort by"),
            GF.select(u, "sort", [["relevance", "Featured"], ["price-asc", "Price: low to high"], ["price-desc", "Price: high to low"], ["rating", "Avg. rating"]],
              { id: "sort", "aria-label": "Sort by", onChange: () => GF.render() }))),
        list.length ? h("div", { class: "grid" }, list.map(card)) : GF.empty("No products match your search and filters", "search")));
  }

  // -- product, cart, checkout, orders ----------------------------------------------------------
  function productPage(sku) {
    const p = product(sku);
    if (!p) return GF.empty("This product is no longer available", "box");
    const u = U();
    if (!u.qty[sku]) u.qty[sku] = 1;
    const setQty = (n) => { u.qty[sku] = Math.max(1, Math.min(n, Math.max(p.stock, 1))); GF.render(); };
    const toast = u.toast;
    u.toast = null;
    return h("div", { class: "product-page" },
      image(p, "big"),
      h("div", { class: "product-info" },
        toast ? h("div", { class: "ok-banner", role: "status" }, toast) : null,
        h("div", { class: "faint" }, `${p.brand} · ${p.category}`),
        h("h1", null, p.name), stars(p),
        h("div", { class: "big-price" }, money(p.price)),
        h("p", null, p.description),
        h("p", { class: p.stock > 0 ? "in-stock" : "out" }, p.stock > 0 ? `In stock (${p.stock} left)` : "Out of stock"),
        h("div", { class: "row" },
          h("div", { class: "stepper" },
            GF.iconButton("minus", "Decrease quantity", () => setQty(u.qty[sku] - 1), { id: "qty-minus" }),
            h("span", { id: "qty", "aria-label": "Quantity" }, String(u.qty[sku])),
            GF.iconButton("plus", "Increase quantity", () => setQty(u.qty[sku] + 1), { id: "qty-plus" })),
          GF.button("Add to cart", () => {
            u.toast = addToCart(sku, u.qty[sku]) ? `Added ${u.qty[sku]} × ${p.name} to your cart` : "No more stock for this item";
            GF.commit();
          }, { class: "btn primary big", id: "add-to-cart", disabled: p.stock <= 0 }),
          GF.button("Buy now", () => { if (addToCart(sku, u.qty[sku]) || S().cart.some((i) => i.sku === sku)) { GF.save(); GF.go("/shop/checkout"); } },
            { class: "btn big", id: "buy-now", disabled: p.stock <= 0 }))));
  }

  function cartPage() {
    const s = S();
    if (!s.cart.length) return h("div", { class: "narrow" }, h("h1", null, "Your cart"), GF.empty("Your cart is empty", "cart"));
    const t = totals("standard");
    return h("div", { class: "narrow cart" }, h("h1", null, "Your cart"),
      h("div", { class: "card" }, s.cart.map((line, i) => {
        const p = product(line.sku);
        return h("div", { class: "cart-line", id: `cart-line-${p.sku}` }, image(p, "small"),
          h("div", { class: "grow" }, h("a", { href: `/shop/product/${p.sku}`, class: "product-name" }, p.name), h("div", { class: "faint" }, money(p.price))),
          h("div", { class: "stepper" },
            GF.iconButton("minus", `Decrease ${p.name}`, () => { if (line.qty > 1) line.qty -= 1; else s.cart.splice(i, 1); GF.commit(); }, { id: `cart-minus-${p.sku}` }),
            h("span", null, String(line.qty)),
            GF.iconButton("plus", `Increase ${p.name}`, () => { if (line.qty < p.stock) line.qty += 1; GF.commit(); }, { id: `cart-plus-${p.sku}` })),
          h("strong", { class: "line-total" }, money(p.price * line.qty)),
          GF.iconButton("trash", `Remove ${p.name}`, () => { s.cart.splice(i, 1); GF.commit(); }, { id: `cart-remove-${p.sku}` }));
      })),
      h("div", { class: "card pad summary" },
        h("div", { class: "row" }, h("span", { class: "grow" }, "Subtotal"), h("strong", { id: "cart-subtotal" }, money(t.subtotal))),
        h("div", { class: "faint" }, t.subtotal >= s.free_shipping_over ? "Free standard shipping" : `Free standard shipping over ${money(s.free_shipping_over)}`),
        GF.button("Proceed to checkout", () => GF.go("/shop/checkout"), { class: "btn primary big block", id: "checkout" })));
  }

  function checkoutPage() {
    const s = S();
    const u = U();
    if (!s.cart.length) return cartPage();
    if (!u.checkout) {
      u.checkout = { name: s.profile.name, email: s.profile.email, address: "", city: s.profile.city, postal_code: "",
        country: s.profile.country, delivery: "standard", card: "", card_name: "", expiry: "", cvc: "", error: null };
    }
    const c = u.checkout;
    const t = totals(c.delivery);
    const radio = (value, label, price) => h("label", { class: `radio-card${c.delivery === value ? " on" : ""}` },
      h("input", { type: "radio", name: "delivery", id: `delivery-${value}`, checked: c.delivery === value,
        onChange: () => { c.delivery = value; GF.render(); } }),
      h("span", { class: "grow" }, label), h("strong", null, price));
    return h("div", { class: "checkout" },
      h("div", { class: "checkout-form" }, h("h1", null, "Checkout"),
        c.error ? h("div", { class: "error-banner", role: "alert", id: "checkout-error" }, c.error) : null,
        h("h3", null, "Shipping address"),
        h("div", { class: "form-grid" },
          h("div", { class: "full" }, GF.field("Full name", GF.input(c, "name", { id: "ship-name" }))),
          h("div", { class: "full" }, GF.field("Street address", GF.input(c, "address", { id: "ship-address", placeholder: "Street and number" }))),
          GF.field("City", GF.input(c, "city", { id: "ship-city" })),
          GF.field("Postal code", GF.input(c, "postal_code", { id: "ship-postal" })),
          GF.field("Country", GF.input(c, "country", { id: "ship-country" })),
          GF.field("Email", GF.input(c, "email", { id: "ship-email", type: "email" }))),
        h("h3", null, "Delivery"),
        radio("standard", "Standard (3–5 business days)", t.subtotal >= s.free_shipping_over ? "Free" : money(STANDARD)),
        radio("express", "Express (1–2 business days)", money(EXPRESS)),
        h("h3", null, "Payment"),
        h("div", { class: "form-grid" },
          h("div", { class: "full" }, GF.field("Card number", GF.input(c, "card", { id: "card-number", placeholder: "1234 5678 9012 3456", inputmode: "numeric" }))),
          h("div", { class: "full" }, GF.field("Name on card", GF.input(c, "card_name", { id: "card-name" }))),
          GF.field("Expiry (MM/YY)", GF.input(c, "expiry", { id: "card-expiry", placeholder: "MM/YY" })),
          GF.field("Security code", GF.input(c, "cvc", { id: "card-cvc", placeholder: "CVC", inputmode: "numeric" })))),
      h("aside", { class: "card pad order-summary" }, h("h3", null, "Order summary"),
        s.cart.map((line) => { const p = product(line.sku); return h("div", { class: "row sum-line" }, h("span", { class: "grow ellipsis" }, `${line.qty} × ${p.name}`), h("span", null, money(p.price * line.qty))); }),
        h("hr"),
        h("div", { class: "row sum-line" }, h("span", { class: "grow" }, "Subtotal"), h("span", null, money(t.subtotal))),
        h("div", { class: "row sum-line" }, h("span", { class: "grow" }, "Shipping"), h("span", null, t.shipping ? money(t.shipping) : "Free")),
        h("div", { class: "row sum-line" }, h("span", { class: "grow" }, `Tax (${Math.round(s.tax_rate * 100)}%)`), h("span", null, money(t.tax))),
        h("div", { class: "row sum-line total" }, h("span", { class: "grow" }, "Total"), h("strong", { id: "order-total" }, money(t.total))),
        GF.button("Place order", placeOrder, { class: "btn primary big block", id: "place-order" })));
  }

  function placeOrder() {
    const s = S();
    const c = U().checkout;
    const digits = c.card.replace(/[\s-]/g, "");
    const exp = /^(\d{2})\s*\/\s*(\d{2})$/.exec(c.expiry.trim());
    c.error = null;
    for (const [key, label] of [["name", "full name"], ["address", "street address"], ["city", "city"], ["postal_code", "postal code"], ["country", "country"]]) {
      if (!c[key].trim()) { c.error = `Enter your ${label}.`; break; }
    }
    if (!c.error && !EMAIL.test(c.email.trim())) c.error = "Enter a valid email address.";
    if (!c.error && !/^\d{13,19}$/.test(digits)) c.error = "Enter a valid card number.";
    if (!c.error && !c.card_name.trim()) c.error = "Enter the name on the card.";
    if (!c.error && (!exp || +exp[1] < 1 || +exp[1] > 12)) c.error = "Expiry must look like 08/27.";
    if (!c.error && !/^\d{3,4}$/.test(c.cvc.trim())) c.error = "Enter the 3- or 4-digit security code.";
    if (c.error) { GF.render(); return; }
    const t = totals(c.delivery);
    const order = {
      id: GF.nextId("ORD"),
      items: s.cart.map((line) => { const p = product(line.sku); return { sku: p.sku, name: p.name, qty: line.qty, price: p.price }; }),
      ...t, delivery: c.delivery,
      shipping_address: { name: c.name.trim(), address: c.address.trim(), city: c.city.trim(), postal_code: c.postal_code.trim(), country: c.country.trim() },
      email: c.email.trim(), payment: { card_last4: digits.slice(-4), name: c.card_name.trim() },
      placed_at: GF.tick(), status: "Processing",
    };
    for (const line of s.cart) product(line.sku).stock -= line.qty;
    s.orders.push(order);
    s.cart = [];
    U().checkout = null;
    GF.save();
    GF.go(`/shop/order/${order.id}`, true);
  }

  function orderPage(id) {
    const o = S().orders.find((x) => x.id === id);
    if (!o) return GF.empty("Order not found", "bag");
    return h("div", { class: "narrow" },
      h("div", { class: "ok-banner", role: "status" }, `Thank you! Your order ${o.id} has been placed.`),
      h("div", { class: "card pad order-card" },
        h("h2", null, `Order ${o.id}`), h("p", { class: "faint" }, `Placed ${GF.fmtDate(o.placed_at, "long")} · ${o.status}`),
        o.items.map((i) => h("div", { class: "row sum-line" }, h("span", { class: "grow" }, `${i.qty} × ${i.name}`), h("span", null, money(i.price * i.qty)))),
        h("hr"),
        h("div", { class: "row sum-line total" }, h("span", { class: "grow" }, "Total charged"), h("strong", null, money(o.total))),
        h("p", null, `Shipping to ${o.shipping_address.name}, ${o.shipping_address.address}, ${o.shipping_address.city} ${o.shipping_address.postal_code}, ${o.shipping_address.country} by ${o.delivery} delivery.`),
        h("p", { class: "faint" }, `Paid with card ending ${o.payment.card_last4}.`)),
      h("div", { class: "row" }, GF.button("Continue shopping", () => GF.go("/shop"), { id: "continue-shopping" }),
        GF.button("Your orders", () => GF.go("/shop/orders"), { id: "your-orders" })));
  }

  function ordersPage() {
    const orders = S().orders.slice().reverse();
    return h("div", { class: "narrow" }, h("h1", null, "Your orders"),
      orders.length ? orders.map((o) => h("a", { class: "card pad order-row", href: `/shop/order/${o.id}`, id: `order-${o.id}` },
        h("strong", null, o.id), h("span", { class: "faint" }, GF.fmtDate(o.placed_at)), h("span", { class: "grow ellipsis" }, o.items.map((i) => i.name).join(", ")),
        h("strong", null, money(o.total)))) : GF.empty("No orders yet", "bag"));
  }

  function render(route) {
    const u = U();
    const [page, arg] = route;
    const views = { product: () => productPage(arg), cart: cartPage, checkout: checkoutPage, order: () => orderPage(arg), orders: ordersPage };
    const content = (views[page] || browse)();
    const n = cartCount();
    const onSearch = () => { if (page) history.replaceState(null, "", "/shop"); GF.render(); };
    return [
      GF.header("shop", {
        title: S().store,
        leading: GF.mobile() && page ? GF.iconButton("back", "Back", () => GF.go("/shop"), { id: "mobile-back" }) : null,
        search: GF.searchBox("shop-search", "Search products", u, "query", onSearch),
        actions: h("div", { class: "row" },
          GF.mobile() ? null : h("a", { href: "/shop/orders", class: "btn ghost", id: "orders-link" }, "Orders"),
          h("a", { href: "/shop/cart", class: "cart-btn", id: "cart-button", "aria-label": `Cart, ${n} item${n === 1 ? "" : "s"}` },
            h("span", { class: "icon", html: ICONS.cart }), n ? h("span", { class: "badge" }, String(n)) : null)),
      }),
      h("main", { class: "main shop-main", "data-keep-scroll": `shop-${page || "browse"}` }, content),
    ];
  }

  GF.register("shop", {
    title: "Shop", icon: "bag", color: "#e8710a",
    empty: () => ({ store: "Marketplace", currency: "USD", tax_rate: 0.08, free_shipping_over: 50, catalog: [], cart: [], orders: [],
      profile: { name: "", email: "", phone: "", city: "", country: "" } }),
    render,
    back: () => { const u = U(); if (u.filters) { u.filters = false; return true; } return false; },
  });
})();
