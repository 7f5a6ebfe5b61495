"""How worlds write money, numbers and dates, and the forms a reader should accept when a
text quotes them (used by the consistency check)."""

from __future__ import annotations

import re
from datetime import date, datetime

from faker.decode import unidecode

from guiforge.worlds.seeds import LocaleInfo

MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

_LEGAL = re.compile(
    r"\b(gmbh|ag|kg|ohg|e\.?\s?g|ug|ltd|plc|inc|llc|llp|corp|co|s\.?\s?a\.?\s?r?\.?\s?l?|s\.?\s?p\.?\s?a|"
    r"s\.?\s?r\.?\s?l|s\.?\s?coop|sp\.?\s?j|sp\.?\s?z\s?o\.?\s?o|ab|bv|b\.v|nv|me|ltda|group|and sons|e filhos|"
    r"y asociados|& asociados|e hijos|spółdzielnia|pvt|private|limited)\b\.?",
    re.IGNORECASE,
)


def ascii_text(s: str) -> str:
    return unidecode(s)


def slug(s: str, sep: str = "-") -> str:
    """ASCII slug: 'Müller & Söhne' -> 'muller-sohne'."""
    out = re.sub(r"[^a-z0-9]+", sep, ascii_text(s).lower()).strip(sep)
    return out or "x"


def unique_email(local: str, domain: str, taken: set[str]) -> str:
    """``local@domain``, numbered (``local2@``, ``local3@``...) until no address in ``taken``
    has it, ignoring case; the address is added to ``taken``."""
    email, k = f"{local}@{domain}", 2
    while email.lower() in taken:
        email, k = f"{local}{k}@{domain}", k + 1
    taken.add(email.lower())
    return email


def company_domain(company: str, tld: str) -> str:
    """A plausible web domain for a company name, without its legal form."""
    core = _LEGAL.sub(" ", company.replace("&", " "))
    words = slug(core, " ").split()[:2] or ["company"]
    return "-".join(words) + "." + tld


def group_digits(int_part: str, sep: str) -> str:
    out = ""
    while len(int_part) > 3:
        out = sep + int_part[-3:] + out
        int_part = int_part[:-3]
    return int_part + out


def format_number(value: float, decimals: int, loc: LocaleInfo) -> str:
    s = f"{abs(value):.{decimals}f}"
    int_part, _, frac = s.partition(".")
    body = group_digits(int_part, loc.group) + (loc.decimal + frac if frac else "")
    return ("-" if value < 0 and float(s) != 0 else "") + body


def format_money(value: float, loc: LocaleInfo, cents: bool = True) -> str:
    """'€1.234,50'-style text in the locale's conventions ('1.234,50 €' for de_DE)."""
    body = format_number(abs(value), 2 if cents else 0, loc)
    sign = "-" if round(value, 2) < 0 else ""
    if loc.symbol_after:
        return f"{sign}{body} {loc.symbol}"
    return f"{sign}{loc.symbol}{body}"


def format_date(d: date, loc: LocaleInfo, weekday: bool = False, year: bool = True) -> str:
    if isinstance(d, datetime):
        d = d.date()
    day, month = d.day, MONTHS[d.month - 1]
    s = f"{month} {day}" if loc.date_style == "mdy" else f"{day} {month}"
    if year:
        s += f", {d.year}" if loc.date_style == "mdy" else f" {d.year}"
    return f"{WEEKDAYS[d.weekday()]}, {s}" if weekday else s


# -- forms a quoting text may use ---------------------------------------------------------
def number_forms(value: float) -> set[str]:
    """Ways to write a number: 1234.5 -> 1234.5, 1234.50, 1,234.50, 1.234,50, 1 234,50, ..."""
    v = round(float(value), 2)
    whole = abs(v - round(v)) < 0.005
    int_part, frac2 = f"{abs(v):.2f}".split(".")
    fracs = {frac2, frac2[0]} if frac2.endswith("0") else {frac2}
    # (grouped integer part, decimal separators it can be combined with)
    groupings = [(int_part, ".,"), (_lakh(int_part), ".")]
    groupings += [
        (group_digits(int_part, g), {",": ".", ".": ","}.get(g, ".,")) for g in ", .\u00a0\u202f'"
    ]
    forms: set[str] = set()
    for g, decs in groupings:
        if whole:
            forms.add(g)
        forms |= {f"{g}{d}{f}" for d in decs for f in fracs}
    return {("-" if v < 0 else "") + f for f in forms}


def _lakh(int_part: str) -> str:
    if len(int_part) <= 3:
        return int_part
    head, tail = int_part[:-3], int_part[-3:]
    parts = []
    while len(head) > 2:
        parts.insert(0, head[-2:])
        head = head[:-2]
    return ",".join([head, *parts, tail]) if head else ",".join([*parts, tail])


def date_forms(d: date) -> set[str]:
    """ISO, long and short forms of a date, with and without weekday or year."""
    month, mon = MONTHS[d.month - 1], MONTHS[d.month - 1][:3]
    day = d.day
    forms = {d.isoformat(), f"{day:02d}/{d.month:02d}/{d.year}", f"{d.month:02d}/{day:02d}/{d.year}",
             f"{day}/{d.month}/{d.year}", f"{d.month}/{day}/{d.year}", f"{day}.{d.month}.{d.year}",
             f"{day:02d}.{d.month:02d}.{d.year}"}  # fmt: skip
    for m in (month, mon):
        for dd in (str(day), _ordinal(day)):
            forms |= {
                f"{dd} {m} {d.year}",
                f"{m} {dd}, {d.year}",
                f"{m} {dd} {d.year}",
                f"{dd} {m}",
                f"{m} {dd}",
            }
            forms.add(f"{dd} of {m}")
    return forms


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def find_number(text: str, value: float) -> bool:
    """Whether ``text`` writes ``value`` as a whole number token (not part of a longer one).
    A negative value must be written negative: a minus (or U+2212) before the number or its
    currency sign, or the amount in parentheses, as statements write it."""
    v = round(float(value), 2)
    if v < 0:
        return any(abs(a + v) < 0.005 for a in negative_amounts(text))
    return any(abs(a - v) < 0.005 for a in parse_amounts(text))


def negative_amounts(text: str) -> list[float]:
    """The magnitudes of the amounts ``text`` writes as negative (-12.50, −€12.50, (12.50))."""
    out: list[float] = []
    for m in _NEGATIVE.finditer(text):
        out.extend(_readings(m.group(1) or m.group(2)))
    return out


def _contains_token(text: str, form: str) -> bool:
    # cheap substring test first; the boundary check only runs where the form occurs
    start = text.find(form)
    while start >= 0:
        before = text[start - 1] if start else ""
        after = text[start + len(form) : start + len(form) + 2]
        if not (before.isdigit() or (before in ".," and before)) and not (
            after[:1].isdigit() or (after[:1] in (".", ",") and after[1:2].isdigit())
        ):
            return True
        start = text.find(form, start + 1)
    return False


def find_date(text: str, d: date) -> bool:
    low = text.lower()
    return any(_contains_token(low, f.lower()) for f in date_forms(d))


# a number as people write amounts: 1234.5 | 1,234.50 | 1.234,50 | 1 234,50 | 12,34,567.00
AMOUNT_RE = r"\d{1,3}(?:[,.\u00a0\u202f ']\d{2,3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
_AMOUNT = re.compile(r"(?<![\d.,])(?:" + AMOUNT_RE + r")(?![\d])")
# a sign that starts a token ("2024-05" and "555-1234" are not negative), then up to three
# non-digits (a currency sign or code) before the number; or the amount in parentheses
_CURRENCY = r"(?:[^\d\s()]{1,3}\s?)?"
_NEGATIVE = re.compile(r"(?<![\w.,])(?:[-\u2212]\s?" + _CURRENCY + r"(" + AMOUNT_RE + r")|\(" + _CURRENCY + r"("
                       + AMOUNT_RE + r")\s?[^\d\s()]{0,3}\))(?![\d])")


def parse_amounts(text: str) -> list[float]:
    """Every number in ``text`` read as an amount, both separator conventions tried."""
    out: list[float] = []
    for m in _AMOUNT.finditer(text):
        out.extend(_readings(m.group(0)))
    return out


_GROUPED = {
    sep: re.compile(r"^\d{1,3}(?:" + re.escape(sep) + r"\d{3})+$") for sep in (",", ".", " ", "'")
}
_LAKH = re.compile(r"^\d{1,2}(?:,\d{2})*,\d{3}$")


def _readings(tok: str) -> list[float]:
    """The values a token can mean: '1.234' is 1234 (grouped) or 1.234 is not an amount, but
    '1.234,50' and '1,234.50' are both 1234.5."""
    t = tok.replace("\u00a0", " ").replace("\u202f", " ")
    vals: set[float] = set()
    for dec in (".", ","):
        int_part, sep, frac = t.rpartition(dec)
        if not sep:
            int_part, frac = t, ""
        elif not (1 <= len(frac) <= 2 and frac.isdigit()):
            int_part, frac = t, ""  # a dot or comma followed by 3 digits groups thousands
        if int_part.isdigit():
            vals.add(float(int_part + "." + frac) if frac else float(int_part))
            continue
        for g, pat in _GROUPED.items():
            if g != dec and pat.match(int_part):
                vals.add(float(int_part.replace(g, "") + ("." + frac if frac else "")))
        if dec == "." and _LAKH.match(int_part):
            vals.add(float(int_part.replace(",", "") + ("." + frac if frac else "")))
    return sorted(vals)
