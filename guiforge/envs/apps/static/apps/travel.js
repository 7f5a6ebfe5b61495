// Travel: search flights, pick one, choose seats on a seat map, fill in passengers, pay,
// get a confirmation. State: {home, airports, flights, bookings, traveler, currency}.
"use strict";

(() => {
  const { h } = GF;
  const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
  const LETTERS = ["A", "B", "C", "D", "E", "F"];
  const PREMIUM_ROWS = 3;
  const PREMIUM_FEE = 30;
  const S = () => GF.app("travel");
  const U = () => GF.uiOf("travel", () => ({ search: { from: airportLabel(S().home), to: "", date: "", passengers: "1" }, sort: "price",
    flight: null, seats: [], people: [], pay: { card: "", name: "", expiry: "", cvc: "" }, error: null }));
  const money = (n) => GF.money(n, S().currency || "USD");
  const flight = (id) => S().flights.find((f) => f.id === id);

  function airportLabel(code) {
    const a = S().airports.find((x) => x.code === code);
    return a ? `${a.city} (${a.code})` : code || "";
  }

  function matchAirport(text) {
    const t = text.trim().toLowerCase();
    if (!t) return null;
    const code = /\(([a-z]{3})\)/i.exec(t);
    const needle = code ? code[1].toLowerCase() : t;
    return S().airports.find((a) => a.code.toLowerCase() === needle) || S().airports.find((a) => a.city.toLowerCase() === needle) ||
      S().airports.find((a) => a.city.toLowerCase().startsWith(needle));
  }

  function parseDate(text) {
    const t = (text || "").trim();
    let m = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(t);
    if (m) return `${m[1]}-${String(+m[2]).padStart(2, "0")}-${String(+m[3]).padStart(2, "0")}`;
    m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(t);
    if (m) return `${m[3]}-${String(+m[1]).padStart(2, "0")}-${String(+m[2]).padStart(2, "0")}`;
    return null;
  }

  function duration(min) { return `${Math.floor(min / 60)}h ${String(min % 60).padStart(2, "0")}m`; }

  // -- search and results -------------------------------------------------------------------
  function runSearch() {
    const u = U();
    const q = u.search;
    const from = matchAirport(q.from);
    const to = matchAirport(q.to);
    const date = parseDate(q.date);
    u.error = !from ? "Choose where you're flying from." : !to ? "Choose a destination." : from.code === to.code ? "Origin and destination must differ."
      : !date ? "Date must look like 2024-06-03." : null;
    if (u.error) { GF.render(); return; }
    u.query = { from: from.code, to: to.code, date, passengers: +q.passengers || 1 };
    GF.go("/travel/results");
  }

  function searchForm(compact) {
    const u = U();
    const q = u.search;
    const suggest = (key) => {
      const t = q[key].trim().toLowerCase();
      if (!t || matchAirport(q[key]) && /\([A-Z]{3}\)$/.test(q[key])) return null;
      const hits = S().airports.filter((a) => a.city.toLowerCase().startsWith(t) || a.code.toLowerCase() === t).slice(0, 4);
      return hits.length && u.focus === key ? h("ul", { class: "list suggest airport-suggest", role: "listbox" }, hits.map((a) => h("li", null,
        h("button", { type: "button", role: "option", class: "suggest-item", id: `${key}-option-${a.code}`,
          onClick: () => { q[key] = `${a.city} (${a.code})`; u.focus = null; GF.render(); } },
        h("strong", null, a.code), h("span", null, a.city), h("span", { class: "faint ellipsis" }, a.name))))) : null;
    };
    const place = (key, label, id) => h("div", { class: "field airport-field" }, h("span", { class: "field-label" }, label),
      GF.input(q, key, { id, "aria-label": label, placeholder: "City or airport",
        onInput: () => { u.focus = key; GF.render(); } }), suggest(key));
    return h("div", { class: `card pad search-card${compact ? " compact" : ""}` },
      u.error ? h("div", { class: "error-banner", role: "alert", id: "search-error" }, u.error) : null,
      h("div", { class: "search-grid" },
        place("from", "From", "search-from"), place("to", "To", "search-to"),
        GF.field("Depart", GF.input(q, "date", { id: "search-date", placeholder: "YYYY-MM-DD" })),
        GF.field("Passengers", GF.select(q, "passengers", ["1", "2", "3", "4"].map((n) => [n, `${n} adult${n === "1" ? "" : "s"}`]), { id: "search-passengers" })),
        GF.button("Search flights", runSearch, { class: "btn primary big", id: "search-flights", icon: "search" })));
  }

  function resultsPage() {
    const u = U();
    if (!u.query) return homePage();
    const q = u.query;
    const by = { price: (a, b) => a.price - b.price, depart: (a, b) => (a.depart < b.depart ? -1 : 1), duration: (a, b) => a.duration_min - b.duration_min };
    const list = S().flights.filter((f) => f.from === q.from && f.to === q.to && f.depart.slice(0, 10) === q.date).sort(by[u.sort] || by.price);
    const otherDates = [...new Set(S().flights.filter((f) => f.from === q.from && f.to === q.to).map((f) => f.depart.slice(0, 10)))].sort();
    return h("div", { class: "travel-page" }, searchForm(true),
      h("div", { class: "row results-bar" },
        h("h2", { class: "grow" }, `${airportLabel(q.from)} → ${airportLabel(q.to)} · ${GF.fmtDate(q.date)}`),
        h("span", { class: "muted hide-mobile" }, "Sort by"),
        GF.select(u, "sort", [["price", "Cheapest"], ["depart", "Departure time"], ["duration", "Shortest"]], { id: "results-sort", "aria-label": "Sort flights" })),
      list.length ? list.map((f) => h("div", { class: "flight-card card", id: `flight-${f.id}` },
        h("div", { class: "flight-times" },
          h("div", null, h("strong", { class: "time" }, GF.fmtTime(f.depart)), h("div", { class: "faint" }, f.from)),
          h("div", { class: "flight-line" }, h("span", { class: "faint small" }, duration(f.duration_min)), h("span", { class: "line" }),
            h("span", { class: `small ${f.stops ? "stops" : "nonstop"}` }, f.stops ? `${f.stops} stop` : "Nonstop")),
          h("div", null, h("strong", { class: "time" }, GF.fmtTime(f.arrive)), h("div", { class: "faint" }, f.to))),
        h("div", { class: "flight-airline" }, h("strong", null, f.airline), h("span", { class: "faint" }, `${f.number} · ${f.cabin}`)),
        h("div", { class: "flight-price" }, h("strong", null, money(f.price)), h("span", { class: "faint small" }, "per person"),
          GF.button("Select", () => selectFlight(f), { class: "btn primary", id: `select-${f.id}`, "aria-label": `Select ${f.airline} ${f.number} at ${GF.fmtTime(f.depart)}, ${f.stops ? `${f.stops} stop` : "nonstop"}, for ${money(f.price)}` }))))
        : h("div", { class: "card pad" }, h("p", null, "No flights on this date."),
          otherDates.length ? h("p", { class: "muted" }, `Flights on this route leave on ${otherDates.map((d) => GF.fmtDate(d)).join(", ")}.`) : null));
  }

  function selectFlight(f) {
    const u = U();
    u.flight = f.id;
    u.seats = [];
    u.people = Array.from({ length: u.query.passengers }, () => ({ first_name: "", last_name: "", dob: "", email: "" }));
    u.error = null;
    GF.go("/travel/seats");
  }

  // -- seats, passengers, review ---------------------------------------------------------------
  function seatsPage() {
    const u = U();
    const f = flight(u.flight);
    if (!f) return homePage();
    const n = u.query.passengers;
    const toggle = (seat) => {
      const i = u.seats.indexOf(seat);
      if (i >= 0) u.seats.splice(i, 1);
      else if (u.seats.length < n) u.seats.push(seat);
      else { u.seats.shift(); u.seats.push(seat); }
      u.error = null;
      GF.render();
    };
    const rows = [];
    for (let r = 1; r <= f.rows; r += 1) {
      const seats = LETTERS.map((l) => {
        const id = `${r}${l}`;
        const taken = f.seats_taken.includes(id);
        const mine = u.seats.includes(id);
        return h("button", { type: "button", class: `seat${taken ? " taken" : ""}${mine ? " mine" : ""}${r <= PREMIUM_ROWS ? " premium" : ""}`,
          id: `seat-${id}`, disabled: taken, "aria-label": `Seat ${id}${taken ? ", taken" : mine ? ", selected" : ", available"}`,
          onClick: () => toggle(id) }, mine ? String(u.seats.indexOf(id) + 1) : l);
      });
      rows.push(h("div", { class: "seat-row" }, seats.slice(0, 3), h("span", { class: "row-no" }, String(r)), seats.slice(3)));
    }
    const fee = u.seats.filter((s) => +s.replace(/\D/g, "") <= PREMIUM_ROWS).length * PREMIUM_FEE;
    return h("div", { class: "travel-page seats-page" },
      h("div", { class: "seat-side" },
        h("h1", null, "Choose your seats"),
        h("p", { class: "muted" }, `${f.airline} ${f.number} · ${airportLabel(f.from)} → ${airportLabel(f.to)} · ${GF.fmtDate(f.depart)} ${GF.fmtTime(f.depart)}`),
        h("div", { class: "legend" }, h("span", null, h("i", { class: "seat-key" }), "Available"), h("span", null, h("i", { class: "seat-key premium" }), `Extra legroom +${money(PREMIUM_FEE)}`),
          h("span", null, h("i", { class: "seat-key taken" }), "Taken"), h("span", null, h("i", { class: "seat-key mine" }), "Selected")),
        h("div", { class: "card pad" }, Array.from({ length: n }, (_, i) => h("div", { class: "row sum-line" },
          h("span", { class: "grow" }, `Passenger ${i + 1}`), h("strong", { id: `chosen-seat-${i + 1}` }, u.seats[i] || "—"))),
        fee ? h("div", { class: "row sum-line" }, h("span", { class: "grow" }, "Seat fees"), h("span", null, money(fee))) : null),
        u.error ? h("div", { class: "error-banner", role: "alert", id: "seat-error" }, u.error) : null,
        GF.button("Continue", () => {
          if (u.seats.length !== n) { u.error = `Choose ${n} seat${n > 1 ? "s" : ""}.`; GF.render(); return; }
          GF.go("/travel/passengers");
        }, { class: "btn primary big block", id: "seats-continue" })),
      h("div", { class: "plane", "data-keep-scroll": "plane" },
        h("div", { class: "seat-row head" }, LETTERS.slice(0, 3).map((l) => h("span", null, l)), h("span", { class: "row-no" }), LETTERS.slice(3).map((l) => h("span", null, l))),
        rows));
  }

  function passengersPage() {
    const u = U();
    const f = flight(u.flight);
    if (!f || u.seats.length !== u.people.length) return seatsPage();
    return h("div", { class: "travel-page narrow-page" },
      h("h1", null, "Who's flying?"),
      u.error ? h("div", { class: "error-banner", role: "alert", id: "passenger-error" }, u.error) : null,
      u.people.map((p, i) => h("div", { class: "card pad form" },
        h("h3", null, `Passenger ${i + 1} · seat ${u.seats[i]}`),
        h("div", { class: "form-grid" },
          GF.field("First name", GF.input(p, "first_name", { id: `p${i + 1}-first` })),
          GF.field("Last name", GF.input(p, "last_name", { id: `p${i + 1}-last` })),
          GF.field("Date of birth", GF.input(p, "dob", { id: `p${i + 1}-dob`, placeholder: "YYYY-MM-DD" })),
          GF.field("Email", GF.input(p, "email", { id: `p${i + 1}-email`, type: "email" }))))),
      GF.button("Continue to payment", () => {
        u.error = null;
        u.people.forEach((p, i) => {
          if (u.error) return;
          if (!p.first_name.trim() || !p.last_name.trim()) u.error = `Enter passenger ${i + 1}'s first and last name.`;
          else if (!parseDate(p.dob)) u.error = `Passenger ${i + 1}'s date of birth must look like 1990-04-21.`;
          else if (i === 0 && !EMAIL.test(p.email.trim())) u.error = "Enter an email address for passenger 1.";
          else if (p.email.trim() && !EMAIL.test(p.email.trim())) u.error = `Passenger ${i + 1}'s email does not look right.`;
        });
        if (u.error) GF.render(); else GF.go("/travel/review");
      }, { class: "btn primary big", id: "passengers-continue" }));
  }

  function price() {
    const u = U();
    const f = flight(u.flight);
    const fees = u.seats.filter((s) => +s.replace(/\D/g, "") <= PREMIUM_ROWS).length * PREMIUM_FEE;
    return { fare: f.price * u.people.length, fees, total: Math.round((f.price * u.people.length + fees) * 100) / 100 };
  }

  function reviewPage() {
    const u = U();
    const f = flight(u.flight);
    if (!f || !u.people.length) return homePage();
    const p = price();
    const pay = u.pay;
    return h("div", { class: "travel-page checkout" },
      h("div", { class: "checkout-form" }, h("h1", null, "Review and pay"),
        u.error ? h("div", { class: "error-banner", role: "alert", id: "pay-error" }, u.error) : null,
        h("div", { class: "card pad" }, h("strong", null, `${f.airline} ${f.number}`),
          h("p", null, `${airportLabel(f.from)} ${GF.fmtTime(f.depart)} → ${airportLabel(f.to)} ${GF.fmtTime(f.arrive)}, ${GF.fmtDate(f.depart, "long")}`),
          u.people.map((x, i) => h("div", { class: "row sum-line" }, h("span", { class: "grow" }, `${x.first_name} ${x.last_name}`), h("span", null, `Seat ${u.seats[i]}`)))),
        h("h3", null, "Payment"),
        h("div", { class: "form-grid" },
          h("div", { class: "full" }, GF.field("Card number", GF.input(pay, "card", { id: "pay-card", placeholder: "1234 5678 9012 3456" }))),
          h("div", { class: "full" }, GF.field("Name on card", GF.input(pay, "name", { id: "pay-name" }))),
          GF.field("Expiry (MM/YY)", GF.input(pay, "expiry", { id: "pay-expiry", placeholder: "MM/YY" })),
          GF.field("Security code", GF.input(pay, "cvc", { id: "pay-cvc", placeholder: "CVC" })))),
      h("aside", { class: "card pad order-summary" }, h("h3", null, "Price"),
        h("div", { class: "row sum-line" }, h("span", { class: "grow" }, `${u.people.length} × fare`), h("span", null, money(p.fare))),
        h("div", { class: "row sum-line" }, h("span", { class: "grow" }, "Seat fees"), h("span", null, money(p.fees))),
        h("div", { class: "row sum-line total" }, h("span", { class: "grow" }, "Total"), h("strong", { id: "booking-total" }, money(p.total))),
        GF.button("Confirm booking", book, { class: "btn primary big block", id: "confirm-booking" })));
  }

  function book() {
    const u = U();
    const pay = u.pay;
    const digits = pay.card.replace(/[\s-]/g, "");
    u.error = !/^\d{13,19}$/.test(digits) ? "Enter a valid card number." : !pay.name.trim() ? "Enter the name on the card."
      : !/^(0[1-9]|1[0-2])\s*\/\s*\d{2}$/.test(pay.expiry.trim()) ? "Expiry must look like 08/27." : !/^\d{3,4}$/.test(pay.cvc.trim()) ? "Enter the security code." : null;
    if (u.error) { GF.render(); return; }
    const f = flight(u.flight);
    const p = price();
    const seq = +GF.nextId("bk").split("-")[1];
    const code = (((seq * 48271) % 2147483647) + 60466176).toString(36).toUpperCase().slice(-6);
    const booking = {
      code, flight_id: f.id, airline: f.airline, number: f.number, from: f.from, to: f.to, depart: f.depart, arrive: f.arrive,
      passengers: u.people.map((x, i) => ({ first_name: x.first_name.trim(), last_name: x.last_name.trim(), dob: parseDate(x.dob), email: x.email.trim(), seat: u.seats[i] })),
      seats: u.seats.slice(), fare: p.fare, seat_fees: p.fees, total: p.total, currency: S().currency || "USD",
      payment: { card_last4: digits.slice(-4), name: pay.name.trim() }, booked_at: GF.tick(), status: "Confirmed",
    };
    f.seats_taken = [...f.seats_taken, ...u.seats].sort();
    S().bookings.push(booking);
    Object.assign(u, { flight: null, seats: [], people: [], pay: { card: "", name: "", expiry: "", cvc: "" } });
    GF.save();
    GF.go(`/travel/booking/${code}`, true);
  }

  function bookingPage(code) {
    const b = S().bookings.find((x) => x.code === code);
    if (!b) return GF.empty("Booking not found", "plane");
    return h("div", { class: "travel-page narrow-page" },
      h("div", { class: "done" }, h("span", { class: "done-icon", html: ICONS.check }), h("h1", null, "You're booked!"),
        h("p", null, "Confirmation code ", h("strong", { id: "confirmation-code" }, b.code))),
      h("div", { class: "card pad" },
        h("strong", null, `${b.airline} ${b.number}`),
        h("p", null, `${airportLabel(b.from)} → ${airportLabel(b.to)}`),
        h("p", null, `${GF.fmtDate(b.depart, "long")}, departs ${GF.fmtTime(b.depart)}, arrives ${GF.fmtTime(b.arrive)}`),
        b.passengers.map((x) => h("div", { class: "row sum-line" }, h("span", { class: "grow" }, `${x.first_name} ${x.last_name}`), h("span", null, `Seat ${x.seat}`))),
        h("div", { class: "row sum-line total" }, h("span", { class: "grow" }, "Total paid"), h("strong", null, money(b.total)))),
      GF.button("My trips", () => GF.go("/travel/trips"), { id: "my-trips" }));
  }

  function tripsPage() {
    const list = S().bookings.slice().reverse();
    return h("div", { class: "travel-page narrow-page" }, h("h1", null, "My trips"),
      list.length ? list.map((b) => h("a", { class: "card pad trip-row", href: `/travel/booking/${b.code}`, id: `trip-${b.code}` },
        h("strong", null, `${b.from} → ${b.to}`), h("span", { class: "grow" }, `${GF.fmtDate(b.depart)} · ${b.airline} ${b.number}`), h("strong", null, b.code)))
        : GF.empty("No trips booked yet", "plane"));
  }

  // Where flights from the home airport go, cheapest fare and travel dates per destination;
  // picking one fills the search form (the traveller still chooses the day).
  function explore() {
    const s = S();
    const routes = {};
    for (const f of s.flights.filter((x) => x.from === s.home)) {
      const r = routes[f.to] || (routes[f.to] = { to: f.to, price: f.price, days: new Set() });
      r.price = Math.min(r.price, f.price);
      r.days.add(f.depart.slice(0, 10));
    }
    const list = Object.values(routes).sort((a, b) => a.price - b.price);
    if (!list.length) return null;
    return h("div", { class: "card pad explore" }, h("h2", null, `Flights from ${airportLabel(s.home)}`),
      list.map((r) => {
        const days = [...r.days].sort();
        const when = days.length > 1 ? `${GF.fmtDate(days[0])} – ${GF.fmtDate(days[days.length - 1])}` : GF.fmtDate(days[0]);
        return h("button", { type: "button", class: "explore-item", id: `explore-${r.to}`,
          "aria-label": `Flights to ${airportLabel(r.to)} from ${money(r.price)}, ${when}`,
          onClick: () => { const u = U(); Object.assign(u.search, { from: airportLabel(s.home), to: airportLabel(r.to), date: days[0] }); u.error = null; GF.render(); } },
        h("strong", null, airportLabel(r.to)), h("span", { class: "faint grow" }, when), h("span", null, `from ${money(r.price)}`));
      }));
  }

  function homePage() {
    return h("div", { class: "travel-home" },
      h("div", { class: "hero" }, h("h1", null, "Where to next?"), h("p", null, "Search flights from your home airport or anywhere else.")),
      h("div", { class: "travel-page" }, searchForm(false), explore()));
  }

  function render(route) {
    const [page, arg] = route;
    const views = { results: resultsPage, seats: seatsPage, passengers: passengersPage, review: reviewPage, booking: () => bookingPage(arg), trips: tripsPage };
    return [
      GF.header("travel", {
        title: "SkyFinder",
        leading: GF.mobile() && page ? GF.iconButton("back", "Back", () => history.back(), { id: "mobile-back" }) : null,
        actions: h("a", { href: "/travel/trips", class: "btn ghost", id: "trips-link" }, "My trips"),
      }),
      h("main", { class: "main travel-main", "data-keep-scroll": `travel-${page || "home"}` }, (views[page] || homePage)()),
    ];
  }

  GF.register("travel", {
    title: "Travel", icon: "plane", color: "#0277bd",
    empty: () => ({ home: "", airports: [], flights: [], bookings: [], traveler: { name: "", email: "", phone: "" }, currency: "USD" }),
    render,
  });
})();
