"""Background money: three months of a current account (the pay the persona's occupation earns
in their country, monthly bills, the clubs of their hobbies, groceries, dining, transport,
shopping, a pet's food) and the bill e-mails that match the bills, two or three from the same
supplier with different numbers and amounts (the near misses a reader must tell apart).
Spending follows income: the price ranges of data/background.yaml are a median earner's, and
a persona who earns more or less spends more or less (less than in proportion).
Used by ``background.with_background``."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from guiforge.worlds.background_mail import email, slots
from guiforge.worlds.formats import MONTHS, format_date, format_money
from guiforge.worlds.life_pools import home_pools
from guiforge.worlds.model import Transaction
from guiforge.worlds.phrases import compose
from guiforge.worlds.seeds import locale_info
from guiforge.worlds.wages import monthly_net

if TYPE_CHECKING:
    from guiforge.worlds.life import Life

HISTORY_MONTHS = 3
REFERENCE_NET = 2900  # the net monthly pay (EUR/USD) the price ranges of background.yaml are written for
SPEND_ELASTICITY = 0.8  # spending grows more slowly than pay
# housing costs over net pay (OECD Affordable Housing Database, HC1.2: tenants typically spend
# 20-35% of disposable income on rent; mortgage holders a little less)
RENT_SHARE = (0.2, 0.33)
MORTGAGE_SHARE = (0.16, 0.28)
_BILL_ROLES = {"landlord": "landlord", "energy": "energy supplier", "telecom": "mobile provider",
               "streaming": "streaming service", "gym": "gym reception", "insurance": "insurance adviser",
               "school": "class teacher"}  # fmt: skip


def spending_scale(net: float, money_scale: float) -> float:
    """Prices for a persona with ``net`` monthly pay (local currency): the locale's money scale
    times (pay over the reference pay in that money) ** elasticity."""
    return money_scale * (net / (REFERENCE_NET * money_scale)) ** SPEND_ELASTICITY


def add_money(life: Life) -> None:
    w, rng = life.world, life.rng
    summed = {f.source[6:] for f in w.facts if f.source.startswith("txsum:")}
    used = {t.category for t in w.transactions}
    # a scenario that sums a category owns it: background payments keep out of it
    ok = lambda cat: cat not in summed  # noqa: E731
    shops = life.vocab["shops"].get(life.country) or life.vocab["shops"]["*"]
    fk_last = [c.name.split()[-1] for c in life.contacts] or ["Rossi"]
    today = w.base_date
    loc = locale_info(w.me.locale)
    salary = monthly_net(w.me, life.country, rng)
    life.scale = spending_scale(salary, loc.money_scale)
    employer = w.me.employer if life.employed else None
    clients = [c for c in life.contacts if c.relation == "client"] or life.contacts
    for m in range(HISTORY_MONTHS, 0, -1):
        pay_day = _months_back(today, m - 1).replace(day=1) - timedelta(days=3)
        if ok("Salary") and employer:
            _tx(life, pay_day, employer, salary, "Salary", "Salary")
        elif ok("Transfer") and not employer:  # a freelancer's month: two or three clients pay
            parts = rng.randint(2, 3)
            for k, share in enumerate(_split(rng, parts)):
                client = rng.choice(clients)
                _tx(life, pay_day - timedelta(days=4 * k), client.organization or client.name,
                    round(salary * rng.uniform(0.7, 1.3) * share, 2), "Transfer", "Client payment")
    for hobby in life.profile.hobbies:
        fee = home_pools().hobbies[hobby].fee
        if fee[1] > 0 and ok("Subscriptions"):
            club = home_pools().hobbies[hobby].club.format(city=w.me.city)
            amount = life.money(*fee)
            for m in range(HISTORY_MONTHS, 0, -1):
                _tx(life, _months_back(today, m - 1).replace(day=rng.randint(1, 5)), club, -amount,
                    "Subscriptions", "Membership fee")
    if not life.profile.renting and ok("Housing") and "Housing" not in used:
        amount = round(salary * rng.uniform(*MORTGAGE_SHARE), 2)
        for m in range(HISTORY_MONTHS, 0, -1):
            _tx(life, _months_back(today, m - 1).replace(day=1), "Northstar Bank", -amount, "Housing", "Mortgage")
    for bill in life.vocab["bills"]:
        if not ok(bill["category"]) or (bill["payee"] == "landlord" and "Rent" in used):
            continue
        if bill["payee"] == "school" and not life.kids:
            continue
        who = next((c for c in life.contacts if c.role == _BILL_ROLES[bill["payee"]]), None)
        if who is None:
            continue
        payee = who.organization or who.name
        # rent is a share of what the household earns; other bills are priced
        amount = round(salary * rng.uniform(*RENT_SHARE), 2) if bill["category"] == "Rent" else life.money(*bill["amount"])
        for m in range(HISTORY_MONTHS, 0, -1):
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
        if not ok(spec["category"]) or (spec.get("needs") == "pet" and not life.profile.pet):
            continue
        payees = _payees(life, spec["payee"], shops, fk_last)
        if spec["payee"] == "restaurant":
            life.places = payees  # friends suggest the places the persona pays at
        elif spec["payee"] == "retail":
            life.shops = payees
        for week in range(HISTORY_MONTHS * 13 // 3):
            for _ in range(rng.randint(*spec["per_week"])):
                day = today - timedelta(days=week * 7 + rng.randint(1, 7))
                _tx(life, day, rng.choice(payees), -life.money(*spec["amount"]), spec["category"], "Card payment")


def _payees(life: Life, kind: str, shops: dict, lasts: list[str]) -> list[str]:
    rng, v = life.rng, life.vocab
    if kind in shops:
        return [str(x) for x in shops[kind]]
    fmt = {"restaurant": v["restaurants"], "retail": v["retail"], "leisure": v["leisure"], "pet": v["pet_shops"]}[kind]
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


def _split(rng, parts: int) -> list[float]:
    """``parts`` shares that add up to one."""
    cuts = sorted(rng.random() for _ in range(parts - 1))
    edges = [0.0, *cuts, 1.0]
    return [b - a for a, b in zip(edges, edges[1:], strict=False)]


def _bill_email(life: Life, vendor, due, amount: float) -> str:
    """A bill notice ten days before it is paid; returns the bill's number."""
    w, rng = life.world, life.rng
    loc = locale_info(w.me.locale)
    number = f"{rng.choice(['INV', 'RE', 'BILL', 'FA'])}-{rng.randint(100000, 999999)}"
    sent = life.moment(due - timedelta(days=10), (6, 9))
    if sent.date() >= w.base_date:
        return number
    spec = life.vocab["bill_email"]
    values = slots(life, sent.date(), vendor, number=number, amount=format_money(amount, loc),
                   date=format_date(due, loc), month=MONTHS[(due - timedelta(days=20)).month - 1],
                   org=vendor.organization)  # fmt: skip
    body = "\n\n".join(compose(p, rng, values) for p in spec["body"] if p)
    email(life, vendor.email, w.me.email, sent, compose(spec["subjects"], rng, values), body,
          read=rng.random() < 0.8)
    return number
