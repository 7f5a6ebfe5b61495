"""World -> initial state JSON of every web/mobile app (``guiforge.envs.apps``).

``app_state(world, app)`` is the state one app starts from; ``web_setup(world, apps)`` is a
``TaskSpec.setup`` for the web and mobile adapters. Everything is a pure function of the
world: derived data (the shop's catalog, flight options, account numbers) comes from
sha256 of the world id, never from ``random`` or a clock, so the same world always gives
byte-identical state.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from datetime import date, datetime, timedelta
from typing import Any

from guiforge.worlds.apps import APP_NAMES, app_info
from guiforge.worlds.model import Document, World
from guiforge.worlds.places import (
    airport,
    airport_for,
    country_code,
    flight_minutes,
    home_of,
    km,
    vat_rate,
)
from guiforge.worlds.seeds import locale_info

DAY_START = "09:00:00"  # the world's "now" on its base date


def _h(world: World, *salt: object) -> int:
    """A stable integer from the world id and a salt."""
    key = "|".join([world.world_id, *map(str, salt)]).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big")


def _iso(value: datetime | date) -> str:
    if isinstance(value, datetime):
        return value.replace(tzinfo=None, microsecond=0).isoformat()
    return value.isoformat()


def _fact(world: World, keys: Iterable[str]) -> Any:
    for key in keys:
        for f in world.facts:
            if f.key == key:
                return f.value
    return None


def _fact_date(world: World, keys: Iterable[str], default: date) -> date:
    value = _fact(world, keys)
    try:
        return date.fromisoformat(str(value)[:10]) if value else default
    except ValueError:
        return default


def _contact_names(world: World) -> dict[str, str]:
    names = {c.email.lower(): c.name for c in world.contacts}
    names[world.me.email.lower()] = world.me.name
    return names


def system_state(world: World) -> dict[str, Any]:
    return {"now": f"{world.base_date.isoformat()}T{DAY_START}", "me": {"name": world.me.name, "email": world.me.email}}


# -- mail ---------------------------------------------------------------------------------
def document_json(world: World, doc: Document) -> dict[str, Any]:
    """A document as the attachment viewer renders it (totals computed once, here)."""
    out: dict[str, Any] = {
        "id": doc.document_id, "filename": doc.filename, "title": doc.title, "kind": doc.kind,
        "author_name": _author(world, doc.author), "currency": doc.currency or world.currency,
        "fields": dict(doc.fields), "paragraphs": doc.text_lines(),  # sections flattened: the viewer shows text
        "line_items": [li.model_dump() for li in doc.line_items],
        "sheets": [s.model_dump() for s in doc.sheets], "slides": [s.model_dump() for s in doc.slides],
    }
    if doc.line_items:
        subtotal = round(sum(li.amount for li in doc.line_items), 2)
        tax = round(subtotal * doc.tax_rate, 2)
        out.update(subtotal=subtotal, tax_rate=doc.tax_rate, tax=tax,
                   total=doc.total if doc.total is not None else round(subtotal + tax, 2))
    elif doc.total is not None:
        out["total"] = doc.total
    out["size"] = 9000 + len(json.dumps(out, sort_keys=True)) * 11  # a plausible file size
    return out


def _author(world: World, author: str) -> str:
    if not author:
        return ""
    if author == "me":
        return world.me.name
    try:
        return world.contact(author).name
    except KeyError:
        return author


def mail_state(world: World) -> dict[str, Any]:
    names = _contact_names(world)
    files = {d.document_id: document_json(world, d) for d in world.documents}
    folders: dict[str, list[dict[str, Any]]] = {f: [] for f in ("inbox", "sent", "drafts", "archive", "trash")}
    for e in sorted(world.emails, key=lambda e: (e.sent_at, e.email_id)):
        folders[e.folder].append({
            "id": e.email_id,
            "from": {"name": names.get(e.sender.lower(), e.sender.split("@")[0]), "email": e.sender},
            "to": list(e.to), "cc": list(e.cc), "subject": e.subject, "body": e.body, "date": _iso(e.sent_at),
            "read": e.read or e.folder in ("sent", "drafts"), "starred": False,
            "attachments": [{"id": a, "filename": files[a]["filename"] if a in files else a,
                             "size": files[a]["size"] if a in files else 0} for a in e.attachments],
            "in_reply_to": None, "forwarded_from": None,
        })
    return {"me": {"name": world.me.name, "email": world.me.email}, **folders, "files": files,
            "address_book": [{"name": c.name, "email": c.email} for c in sorted(world.contacts, key=lambda c: c.name)]}


# -- calendar, contacts, notes, chat ------------------------------------------------------------
def calendar_state(world: World) -> dict[str, Any]:
    events = []
    for e in sorted(world.events, key=lambda e: (e.start, e.event_id)):
        attendees = []
        for cid in e.attendees:
            try:
                c = world.contact(cid)
                attendees.append({"name": c.name, "email": c.email})
            except KeyError:
                attendees.append({"name": cid, "email": ""})
        events.append({"id": e.event_id, "title": e.title, "start": _iso(e.start), "end": _iso(e.end),
                       "location": e.location, "attendees": attendees, "description": e.description})
    return {"today": world.base_date.isoformat(), "events": events,
            "people": [{"name": c.name, "email": c.email} for c in sorted(world.contacts, key=lambda c: c.name)]}


def contacts_state(world: World) -> dict[str, Any]:
    return {"contacts": [
        {"id": c.contact_id, "name": c.name, "email": c.email, "phone": c.phone, "company": c.organization,
         "title": c.role, "relation": c.relation, "notes": "", "favorite": False}
        for c in sorted(world.contacts, key=lambda c: (c.name, c.contact_id))
    ]}


def notes_state(world: World) -> dict[str, Any]:
    now = datetime.fromisoformat(f"{world.base_date.isoformat()}T{DAY_START}")
    return {"notes": [
        {"id": n.note_id, "title": n.title, "body": n.body, "pinned": False,
         "updated": _iso(now - timedelta(days=i + 1, minutes=_h(world, "note", n.note_id) % 600))}
        for i, n in enumerate(world.notes)
    ]}


def chat_state(world: World) -> dict[str, Any]:
    known = {c.contact_id: c.name for c in world.contacts}
    threads = []
    for ch in world.chats:
        msgs = [{"id": f"{ch.chat_id}-m{i + 1}", "sender": m.sender,
                 "sender_name": world.me.name if m.sender == "me" else known.get(m.sender, m.sender),
                 "text": m.text, "sent_at": _iso(m.sent_at)}
                for i, m in enumerate(sorted(ch.messages, key=lambda m: m.sent_at))]
        unread = 0
        for m in reversed(msgs):
            if m["sender"] == "me":
                break
            unread += 1
        threads.append({"id": ch.chat_id, "title": ch.title, "participants": list(ch.participants),
                        "messages": msgs, "unread": unread})
    return {"me": {"id": "me", "name": world.me.name},
            "contacts": [{"id": c.contact_id, "name": c.name} for c in sorted(world.contacts, key=lambda c: c.name)],
            "threads": threads}


# -- bank ---------------------------------------------------------------------------------
CATEGORIES = ["Groceries", "Dining", "Rent", "Utilities", "Transport", "Travel", "Shopping", "Entertainment",
              "Health", "Salary", "Transfer", "Subscriptions", "Other"]


def _account_number(world: World, salt: str) -> str:
    return f"{_h(world, 'acct', salt) % 10**8:08d}"


def _iban(world: World, salt: str) -> str:
    n = _h(world, "iban", salt)
    return f"GB{n % 90 + 10:02d} NWBK {n % 10000:04d} {(n // 10**4) % 10000:04d} {(n // 10**8) % 10000:04d} {(n // 10**12) % 100:02d}"


def _saved_payee(c) -> bool:
    """Payees people save: everyone the scenario brought, and of the background only the
    bills and family (not every newsletter and colleague)."""
    return not c.contact_id.startswith("c_bg_") or c.relation in ("vendor", "family", "client")


def bank_state(world: World) -> dict[str, Any]:
    spent = round(sum(t.amount for t in world.transactions), 2)
    opening = 2500 + _h(world, "opening") % 2500
    accounts = [
        {"id": "acc-checking", "name": "Everyday Checking", "type": "checking",
         "number": _account_number(world, "checking"), "balance": round(opening + spent, 2)},
        {"id": "acc-savings", "name": "Savings", "type": "savings",
         "number": _account_number(world, "savings"), "balance": float(8000 + _h(world, "savings") % 9000)},
    ]
    transactions = [
        {"id": t.transaction_id, "account": "acc-checking", "date": t.booked_on.isoformat(), "payee": t.payee,
         "amount": t.amount, "category": t.category, "memo": t.memo}
        for t in sorted(world.transactions, key=lambda t: (t.booked_on, t.transaction_id))
    ]
    used = {t.category for t in world.transactions if t.category}
    payees = [{"id": f"payee-{c.contact_id}", "name": c.organization if c.relation in ("vendor", "landlord") and c.organization else c.name,
               "iban": _iban(world, c.contact_id)} for c in world.contacts if _saved_payee(c)]
    return {"bank": "Northstar Bank", "currency": world.currency, "accounts": accounts, "transactions": transactions,
            "categories": CATEGORIES + sorted(used - set(CATEGORIES)), "payees": payees, "transfers": []}


# -- shop ---------------------------------------------------------------------------------
# (name, brand, category, icon, base price, description)
PRODUCTS: list[tuple[str, str, str, str, float, str]] = [
    ("Carry-on spinner suitcase 22\"", "Voyager", "Travel", "luggage", 149.0, "Hard-shell carry-on with four spinner wheels and a TSA lock."),
    ("Universal travel adapter", "Voltaic", "Travel", "plug", 24.99, "Works in 150+ countries; two USB-C and two USB-A ports."),
    ("Memory foam neck pillow", "Restwell", "Travel", "luggage", 29.5, "Washable cover, compresses to a third of its size."),
    ("Packing cubes, set of 4", "Voyager", "Travel", "box", 34.0, "Ripstop nylon cubes in four sizes."),
    ("Noise-cancelling headphones", "Sonora", "Electronics", "headphones", 199.0, "30-hour battery, adaptive noise cancelling."),
    ("USB-C laptop charger 65W", "Voltaic", "Electronics", "plug", 45.0, "GaN charger with a 2 m cable."),
    ("27\" 4K monitor", "Clarity", "Electronics", "laptop", 329.0, "IPS panel, USB-C with 65 W power delivery."),
    ("Wireless mouse", "Clarity", "Electronics", "laptop", 27.99, "Silent clicks, up to 18 months per battery."),
    ("Compact mirrorless camera", "Lumen", "Electronics", "camera", 649.0, "24 MP sensor, 4K video, flip screen."),
    ("Mechanical keyboard", "Keystone", "Office", "laptop", 89.0, "Hot-swappable brown switches, aluminium frame."),
    ("A5 dotted notebook, 3-pack", "Paperline", "Office", "book", 18.5, "120 gsm paper, lay-flat binding."),
    ("Ergonomic desk chair", "Posture", "Office", "box", 279.0, "Adjustable lumbar support and armrests."),
    ("Standing desk converter", "Posture", "Office", "box", 189.0, "Gas-spring lift, fits two monitors."),
    ("LED desk lamp", "Lumen", "Home", "lamp", 39.0, "Five colour temperatures, USB charging port."),
    ("Ceramic pour-over coffee set", "Hearth", "Home", "cup", 42.0, "Dripper, carafe and two cups."),
    ("Insulated water bottle 750 ml", "Hearth", "Home", "cup", 26.0, "Keeps drinks cold for 24 hours."),
    ("Cotton crew t-shirt", "Basics Co", "Clothing", "shirt", 19.0, "Heavyweight organic cotton."),
    ("Packable rain jacket", "Northpeak", "Clothing", "shirt", 79.0, "Waterproof, packs into its own pocket."),
    ("Merino travel socks, 3 pairs", "Northpeak", "Clothing", "shirt", 32.0, "Odour-resistant and quick-drying."),
    ("The Pragmatic Planner", "Ridge Books", "Books", "book", 16.99, "Project planning that survives contact with reality."),
]


# Drawn per world on top of PRODUCTS (which cards name): no two worlds sell the same range.
# None of these is a product the infeasible shop card asks for (mats, shoes, helmets, TVs, ink, kettles).
EXTRA_PRODUCTS: list[tuple[str, str, str, str, float, str]] = [
    ("Hanging toiletry bag", "Voyager", "Travel", "luggage", 27.0, "Water-resistant, with a hook and four compartments."),
    ("Luggage scale", "Voyager", "Travel", "luggage", 12.5, "Digital, weighs up to 50 kg."),
    ("Passport holder", "Northpeak", "Travel", "book", 15.0, "Leather, with RFID blocking."),
    ("Weekender duffel bag", "Northpeak", "Travel", "luggage", 89.0, "45 litres, fits under most plane seats."),
    ("Travel bottle set", "Hearth", "Travel", "cup", 11.99, "Four leak-proof silicone bottles, 100 ml each."),
    ("Foldable daypack", "Northpeak", "Travel", "luggage", 22.0, "Packs into its own pocket, 20 litres."),
    ("Sleep mask and earplugs", "Restwell", "Travel", "luggage", 9.5, "Contoured mask with foam earplugs."),
    ("Portable power bank 20000 mAh", "Voltaic", "Electronics", "plug", 49.0, "Charges a phone four times; USB-C in and out."),
    ("Bluetooth speaker", "Sonora", "Electronics", "headphones", 59.0, "Waterproof, 12-hour battery."),
    ("Webcam 1080p", "Clarity", "Electronics", "camera", 54.0, "Autofocus, two microphones, privacy shutter."),
    ("E-reader 6\"", "Lumen", "Electronics", "book", 119.0, "Glare-free screen, weeks of battery."),
    ("Smart plug, 2-pack", "Voltaic", "Electronics", "plug", 24.0, "Schedules and energy monitoring in the app."),
    ("In-ear wireless earbuds", "Sonora", "Electronics", "headphones", 79.0, "Six hours per charge, charging case."),
    ("USB-C hub 7-in-1", "Clarity", "Electronics", "laptop", 39.0, "HDMI, SD card and three USB ports."),
    ("Action camera", "Lumen", "Electronics", "camera", 219.0, "Waterproof to 10 m, 4K at 60 fps."),
    ("Document scanner", "Clarity", "Office", "laptop", 169.0, "Duplex, 25 pages a minute."),
    ("Desk organiser", "Paperline", "Office", "box", 21.0, "Bamboo, five compartments."),
    ("Monitor arm", "Posture", "Office", "laptop", 69.0, "Gas spring, for screens up to 32\"."),
    ("Whiteboard 90 x 60 cm", "Paperline", "Office", "book", 45.0, "Magnetic, with marker tray."),
    ("Fountain pen", "Paperline", "Office", "book", 29.0, "Steel nib, refillable converter."),
    ("Footrest", "Posture", "Office", "box", 32.0, "Adjustable tilt, textured surface."),
    ("Label printer", "Keystone", "Office", "laptop", 59.0, "Prints over Bluetooth from the phone."),
    ("Paper shredder", "Keystone", "Office", "box", 79.0, "Cross-cut, 8 sheets at a time."),
    ("Linen bed sheet set", "Hearth", "Home", "box", 69.0, "Stonewashed linen, double size."),
    ("Cast-iron casserole 24 cm", "Hearth", "Home", "cup", 89.0, "Enamelled, oven-safe to 250 °C."),
    ("Glass food containers, set of 5", "Hearth", "Home", "cup", 34.0, "Airtight lids, microwave-safe."),
    ("Cordless stick vacuum", "Brightline", "Home", "box", 199.0, "40 minutes runtime, wall mount."),
    ("Scented candle", "Hearth", "Home", "lamp", 18.0, "Cedar and fig, 40 hours."),
    ("Throw blanket", "Hearth", "Home", "box", 39.0, "Recycled wool blend, 130 x 170 cm."),
    ("Chef's knife 20 cm", "Hearth", "Home", "box", 59.0, "German steel, full tang."),
    ("Bathroom scale", "Brightline", "Home", "box", 29.0, "Glass top, up to 180 kg."),
    ("Wool beanie", "Northpeak", "Clothing", "shirt", 22.0, "Merino, one size."),
    ("Fleece jacket", "Northpeak", "Clothing", "shirt", 65.0, "Recycled polyester, two zip pockets."),
    ("Chino trousers", "Basics Co", "Clothing", "shirt", 49.0, "Stretch cotton, slim fit."),
    ("Linen shirt", "Basics Co", "Clothing", "shirt", 45.0, "Relaxed fit, mother-of-pearl buttons."),
    ("Leather belt", "Basics Co", "Clothing", "shirt", 35.0, "Full-grain leather, brass buckle."),
    ("Down vest", "Northpeak", "Clothing", "shirt", 89.0, "Lightweight, packs into a pouch."),
    ("Cotton hoodie", "Basics Co", "Clothing", "shirt", 42.0, "Brushed inside, kangaroo pocket."),
    ("Field Notes on Focus", "Ridge Books", "Books", "book", 14.5, "Short essays on deep work."),
    ("A Year of Simple Meals", "Ridge Books", "Books", "book", 24.0, "Seasonal recipes for weeknights."),
    ("Spreadsheets for Humans", "Ridge Books", "Books", "book", 19.99, "Formulas, pivots and charts without fear."),
    ("The Quiet Manager", "Ridge Books", "Books", "book", 17.5, "Leading teams without the noise."),
]


def _money_scale(world: World) -> float:
    return locale_info(world.me.locale).money_scale


def _sales_tax(world: World) -> float:
    """The home country's VAT (or the US state's sales tax), data/countries.yaml."""
    rate = vat_rate(world.me.country_code or country_code(world.me.country), world.me.region)
    return 0.08 if rate is None else rate


def shop_catalog_rows(world: World) -> list[tuple[str, str, str, str, float, str]]:
    """This world's range: the core products plus 16-28 drawn from EXTRA_PRODUCTS."""
    extra = sorted(EXTRA_PRODUCTS, key=lambda p: _h(world, "range", p[0]))
    return list(PRODUCTS) + extra[: 16 + _h(world, "range-size") % 13]


def shop_state(world: World) -> dict[str, Any]:
    city = str(_fact(world, ("trip_city", "destination", "trip_destination", "travel_city")) or _away_city(world) or "")
    rows = shop_catalog_rows(world)
    if city:
        rows.append((f"{city} pocket guide", "Ridge Books", "Books", "book", 14.99, f"Maps, neighbourhoods and day trips for {city}."))
        rows.append((f"{city} phrasebook & map", "Ridge Books", "Books", "book", 9.99, f"Essential phrases and a fold-out map of {city}."))
    catalog = []
    scale = _money_scale(world)
    for i, (name, brand, category, icon, base, desc) in enumerate(rows):
        n = _h(world, "product", name)
        price = round(base * scale * (0.9 + (n % 21) / 100), 2)  # local prices, +-10 % per world
        catalog.append({
            "sku": f"SKU-{(n % 900000) + 100000}", "name": name, "brand": brand, "category": category, "icon": icon,
            "price": price, "rating": round(3.6 + (n // 7 % 14) / 10, 1), "reviews": 12 + n // 11 % 2400,
            "description": desc, "stock": 0 if n % 17 == 0 else 3 + n // 13 % 40,
            "hue": (n // 17) % 360, "order": i,
        })
    me = world.me
    return {"store": "Marketplace", "currency": world.currency, "tax_rate": _sales_tax(world),
            "free_shipping_over": round(50.0 * scale, 2),
            "catalog": catalog, "cart": [], "orders": [],
            "profile": {"name": me.name, "email": me.email, "phone": me.phone, "city": me.city, "country": me.country}}


# -- travel -------------------------------------------------------------------------------
AIRPORTS = {
    "Chicago": ("ORD", "O'Hare International"), "New York": ("JFK", "John F. Kennedy International"),
    "London": ("LHR", "Heathrow"), "Paris": ("CDG", "Charles de Gaulle"), "Lisbon": ("LIS", "Humberto Delgado"),
    "Berlin": ("BER", "Berlin Brandenburg"), "Madrid": ("MAD", "Adolfo Suárez Madrid–Barajas"),
    "Rome": ("FCO", "Fiumicino"), "Amsterdam": ("AMS", "Schiphol"), "Tokyo": ("HND", "Haneda"),
    "San Francisco": ("SFO", "San Francisco International"), "Toronto": ("YYZ", "Pearson International"),
    "Barcelona": ("BCN", "El Prat"), "Dublin": ("DUB", "Dublin"), "Singapore": ("SIN", "Changi"),
    "Sydney": ("SYD", "Kingsford Smith"), "Mumbai": ("BOM", "Chhatrapati Shivaji Maharaj"),
    "Munich": ("MUC", "Munich"), "Zurich": ("ZRH", "Zurich"), "Boston": ("BOS", "Logan International"),
}
AIRLINES = [("Atlantic Air", "AA"), ("SkyBridge", "SB"), ("Meridian", "MD"), ("Northwind Airways", "NW"), ("Azul Europa", "AZ")]
SEAT_ROWS = 24
SEAT_LETTERS = "ABCDEF"


def _away_city(world: World) -> str | None:
    for e in world.events:
        if e.location and e.location.split(",")[0].strip() in AIRPORTS and e.location.split(",")[0].strip() != world.me.city:
            return e.location.split(",")[0].strip()
    return None


def _airport(city: str) -> dict[str, str]:
    code, name = AIRPORTS.get(city, ("".join(ch for ch in city.upper() if ch.isalpha())[:3].ljust(3, "X"), f"{city} International"))
    return {"code": code, "city": city, "name": name}


def _flights(world: World, origin: dict[str, str], dest: dict[str, str], day: date, count: int) -> list[dict[str, Any]]:
    out = []
    base_minutes = _block_minutes(origin["code"], dest["code"]) or 300 + _h(world, "dur", origin["code"], dest["code"]) % 540
    base_price = 180 + _h(world, "fare", origin["code"], dest["code"]) % 600
    for i in range(count):
        n = _h(world, "flight", origin["code"], dest["code"], day.isoformat(), i)
        airline, code = AIRLINES[n % len(AIRLINES)]
        stops = 0 if i % 3 == 0 else (1 if i % 3 == 1 else n % 2)
        duration = base_minutes + stops * (70 + n % 110) + n % 35
        depart = datetime.combine(day, datetime.min.time()) + timedelta(hours=6 + i * 3, minutes=(n // 7) % 12 * 5)
        arrive = depart + timedelta(minutes=duration)
        taken = sorted(f"{r}{c}" for r in range(1, SEAT_ROWS + 1) for c in SEAT_LETTERS if _h(world, "seat", n, r, c) % 10 < 4)
        out.append({
            "id": f"fl-{origin['code']}-{dest['code']}-{day.strftime('%m%d')}-{i + 1}", "airline": airline,
            "number": f"{code}{100 + n % 900}", "from": origin["code"], "to": dest["code"],
            "depart": _iso(depart), "arrive": _iso(arrive), "duration_min": duration, "stops": stops,
            "price": float(round((base_price * (0.75 + (n // 3 % 60) / 100) - stops * 35) * _money_scale(world), 0)),
            "cabin": "Economy", "rows": SEAT_ROWS, "seats_taken": taken,
        })
    return out


def _block_minutes(a: str, b: str) -> int | None:
    """A nonstop's block time from the great-circle distance, where both airports are real."""
    x, y = airport(a), airport(b)
    return flight_minutes(km(x.lat, x.lon, y.lat, y.lon)) if x and y else None


def _real_airport(world: World, iata: str | None = None) -> dict[str, str] | None:
    """The persona's home airport (or the one named) from airportsdata."""
    if iata:
        ap = airport(iata)
    else:
        city = home_of(world.me)
        ap = airport_for(city) if city else None
    if ap is None:
        return None
    return {"code": ap.iata, "city": world.me.city if not iata else ap.city, "name": ap.name}


def _trip_airport(world: World, home: str) -> dict[str, str] | None:
    """The airport a flight in the calendar goes to: 'Flight to Munich (MUC)'."""
    for e in sorted(world.events, key=lambda e: (e.start, e.event_id)):
        if e.title.lower().startswith("flight"):
            for code in re.findall(r"\(([A-Z]{3})\)", f"{e.title} {e.location}"):
                ap = _real_airport(world, code) if code != home else None
                if ap:
                    return ap
    return None


def travel_state(world: World) -> dict[str, Any]:
    # a hub the table knows (Chicago: O'Hare, not Midway), else the real airport nearest home
    home = _airport(world.me.city) if world.me.city in AIRPORTS else _real_airport(world) or _airport(world.me.city)
    dest = _trip_airport(world, home["code"])
    if dest is None:
        city = str(_fact(world, ("trip_city", "destination", "trip_destination", "travel_city")) or _away_city(world) or "")
        if not city or city == world.me.city:
            others = sorted(c for c in AIRPORTS if c != world.me.city and AIRPORTS[c][0] != home["code"])
            city = others[_h(world, "dest") % len(others)]
        dest = _airport(city)
    out_day = _fact_date(world, ("trip_date", "trip_start", "departure_date"), world.base_date + timedelta(days=21))
    back_day = _fact_date(world, ("trip_return_date", "trip_end", "return_date"), out_day + timedelta(days=4))
    flights = []
    for d in (out_day - timedelta(days=1), out_day, out_day + timedelta(days=1)):
        flights += _flights(world, home, dest, d, 5)
    flights += _flights(world, dest, home, back_day, 4)
    airports = {a["code"]: a for a in [home, dest] + [_airport(c) for c in sorted(AIRPORTS)]}
    return {"home": home["code"], "airports": sorted(airports.values(), key=lambda a: a["city"]),
            "flights": flights, "bookings": [], "currency": world.currency,
            "traveler": {"name": world.me.name, "email": world.me.email, "phone": world.me.phone}}


BUILDERS: dict[str, Callable[[World], dict[str, Any]]] = {
    "mail": mail_state, "calendar": calendar_state, "contacts": contacts_state, "shop": shop_state,
    "notes": notes_state, "bank": bank_state, "travel": travel_state, "chat": chat_state,
}


def canonical(value: Any) -> Any:
    """JSON as the page hands it back: JavaScript has one number type, so 14749.0 returns
    as 14749. Normalising here makes the seed and a fresh final state byte-identical."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    return value


def app_state(world: World, app: str) -> dict[str, Any]:
    """The initial state JSON of one app, seeded from ``world``."""
    try:
        builder = BUILDERS[app]
    except KeyError:
        raise ValueError(f"no web app named {app!r}; known apps: {', '.join(APP_NAMES)}") from None
    return canonical(builder(world))


def web_setup(world: World, apps: Iterable[str] | None = None, start: str | None = None) -> dict[str, Any]:
    """A ``TaskSpec.setup`` for the web/mobile adapters: every named app's state (all apps
    by default), the world's clock and owner, and the start route (an app or a path)."""
    names = list(apps) if apps is not None else list(APP_NAMES)
    if start is not None and start not in APP_NAMES and not start.startswith("/"):
        raise ValueError(f"start must be an app name or a path like /mail/inbox, not {start!r}")
    setup: dict[str, Any] = {"apps": {a: app_state(world, a) for a in names}, "system": system_state(world)}
    if start is not None:
        setup["start"] = app_info(start).home if start in APP_NAMES else start
    return setup
