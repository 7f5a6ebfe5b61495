"""Background money: three months of a current account (salary, monthly bills, groceries,
dining, transport, shopping) and the bill e-mails that match the bills, two or three from
the same supplier with different numbers and amounts (the near misses a reader must tell
apart). Used by ``background.with_background``."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from guiforge.worlds.formats import format_date, format_money
from guiforge.worlds.model import Email, Transaction
from guiforge.worlds.seeds import locale_info

if TYPE_CHECKING:
    from guiforge.worlds.life import Life

MONTHS = 3
_BILL_ROLES = {"landlord": "landlord", "energy": "energy supplier", "telecom": "mobile provider",
               "streaming": "streaming service", "gym": "gym reception", "insurance": "insurance adviser"}  # fmt: skip


def add_money(life: Life) -> None:
    w, rng = life.world, life.rng
    summed = {f.source[6:] for f in w.facts if f.source.startswith("txsum:")}
    used = {t.category for t in w.transactions}
    # a scenario that sums a category owns it: background payments keep out of it
    ok = lambda cat: cat not in summed  # noqa: E731
    shops = life.vocab["shops"].get(life.country) or life.vocab["shops"]["*"]
    fk_last = [c.name.split()[-1] for c in life.contacts] or ["Rossi"]
    today = w.base_date
    lo, hi = life.vocab["salary"]
    salary = life.money(lo, hi)
    employer = w.me.employer if w.me.employer != "Self-employed" else None
    for m in range(MONTHS, 0, -1):
        pay_day = _months_back(today, m - 1).replace(day=1) - timedelta(days=3)
        if ok("Salary") and employer:
            _tx(life, pay_day, employer, salary, "Salary", "Salary")
        elif ok("Transfer") and not employer:
            client = rng.choice(life.roles.get("client") or life.contacts)
            _tx(life, pay_day, client.organization or client.name, life.money(lo, hi), "Transfer",
                "Client payment")
    for bill in life.vocab["bills"]:
        if not ok(bill["category"]) or (bill["payee"] == "landlord" and "Rent" in used):
            continue
        who = (life.roles.get(_BILL_ROLES[bill["payee"]]) or [None])[0]
        if who is None:
            continue
        payee = who.organization or who.name
        amount = life.money(*bill["amount"])
        for m in range(MONTHS, 0, -1):
            day = _months_back(today, m).replace(day=rng.randint(1, 6)) + timedelta(days=30)
            if day >= today:
                continue
            # energy and phone bills vary month to month; rent and subscriptions do not
            amt = round(amount * rng.uniform(0.8, 1.25), 2) if bill["category"] == "Utilities" else amount
            memo = f"{bill['payee'].capitalize()} {format_date(day, locale_info(w.me.locale), year=False)}"
            if bill["category"] == "Utilities":
                number = _bill_email(life, who, day, amt)
                memo = f"Invoice {number}"
            _tx(life, day, payee, -amt, bill["category"], memo)
    for spec in life.vocab["spending"]:
        if not ok(spec["category"]):
            continue
        payees = _payees(life, spec["payee"], shops, fk_last)
        for week in range(MONTHS * 13 // 3):
            for _ in range(rng.randint(*spec["per_week"])):
                day = today - timedelta(days=week * 7 + rng.randint(1, 7))
                _tx(life, day, rng.choice(payees), -life.money(*spec["amount"]), spec["category"], "Card payment")


def _payees(life: Life, kind: str, shops: dict, lasts: list[str]) -> list[str]:
    rng, v = life.rng, life.vocab
    if kind in shops:
        return [str(x) for x in shops[kind]]
    fmt = {"restaurant": v["restaurants"], "retail": v["retail"], "leisure": v["leisure"]}[kind]
    return [f.format(last=rng.choice(lasts), brand=life.brand(), city=life.world.me.city)
            for f in rng.sample(fmt, min(4, len(fmt)))]  # fmt: skip


def _months_back(d, m: int):
    y, mo = d.year, d.month - m
    while mo <= 0:
        y, mo = y - 1, mo + 12
    return d.replace(year=y, month=mo, day=1)


def _tx(life: Life, day, payee: str, amount: float, category: str, memo: str) -> None:
    life.transactions.append(Transaction(transaction_id=life.next_id("tx"), booked_on=day,
                                         payee=payee, amount=amount, category=category, memo=memo))  # fmt: skip


def _bill_email(life: Life, vendor, due, amount: float) -> str:
    """A bill notice ten days before it is paid; returns the bill's number."""
    w, rng = life.world, life.rng
    loc = locale_info(w.me.locale)
    number = f"{rng.choice(['INV', 'RE', 'BILL', 'FA'])}-{rng.randint(100000, 999999)}"
    sent = life.moment(due - timedelta(days=10), (6, 9))
    if sent.date() >= w.base_date:
        return number
    month = format_date(due - timedelta(days=20), loc, year=False).split()[-1] if loc else ""
    life.emails.append(Email(
        email_id=life.next_id("em"), sender=vendor.email, to=[w.me.email], sent_at=sent,
        subject=f"Your {vendor.organization} bill {number}",
        body=(f"Dear {w.me.name},\n\nyour bill {number} ({month}) is ready. The amount of "
              f"{format_money(amount, loc)} will be collected from your account on "
              f"{format_date(due, loc)}.\n\n{vendor.organization} customer service\n"),
        read=rng.random() < 0.8))  # fmt: skip
    return number
