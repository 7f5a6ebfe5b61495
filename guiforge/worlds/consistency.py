"""Consistency checks that keep a world honest, whoever built it (template or LLM): every
reference resolves, every sum adds up, every sourced fact recomputes, and every text that
quotes a fact or a total quotes the right number. ``check_world`` never raises on odd input:
whatever it cannot make sense of is itself a problem."""

from __future__ import annotations

import math
import re
from datetime import date

from guiforge.worlds.background_docs import check_budget
from guiforge.worlds.coherence import check_coherence  # its real-world data loads on first use
from guiforge.worlds.formats import AMOUNT_RE, find_date, find_number, parse_amounts
from guiforge.worlds.model import Document, Email, Fact, Sheet, World
from guiforge.worlds.problem import Problem
from guiforge.worlds.sources import SourceError, data_rows, resolve

CENT = 0.005 + 1e-9


def check_world(world: World) -> list[Problem]:
    out: list[Problem] = []
    for check in (_identity, _references, _times, _documents, _facts, _citations, _quoted_totals):
        out.extend(check(world))
    out.extend(Problem(code, message) for code, message in check_budget(world))
    out.extend(check_coherence(world))
    return out


def _num(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _identity(w: World) -> list[Problem]:
    out = []
    if w.persona_id != w.me.persona_id:
        msg = f"world {w.world_id}: persona_id {w.persona_id} != me.persona_id {w.me.persona_id}"
        out.append(Problem("persona_mismatch", msg))
    seen = {w.me.email.lower(): "me"}
    for c in w.contacts:
        if c.email.lower() in seen:
            msg = f"contact {c.contact_id}: email {c.email} is also {seen[c.email.lower()]}'s"
            out.append(Problem("duplicate_address", msg))
        seen.setdefault(c.email.lower(), c.contact_id)
    return out


def _references(w: World) -> list[Problem]:
    out = []
    addresses = {w.me.email.lower()} | {c.email.lower() for c in w.contacts}
    contacts = {c.contact_id for c in w.contacts}
    docs = {d.document_id for d in w.documents}
    for e in w.emails:
        for field, addrs in (("sender", [e.sender]), ("to", e.to), ("cc", e.cc)):
            for a in addrs:
                if a.lower() not in addresses:
                    msg = f"email {e.email_id}: {field} {a} is neither the persona nor a contact"
                    out.append(Problem("unknown_address", msg))
        for a in e.attachments:
            if a not in docs:
                msg = f"email {e.email_id}: attachment {a} is not a document"
                out.append(Problem("unknown_attachment", msg))
    for ev in w.events:
        for a in ev.attendees:
            if a not in contacts:
                msg = f"event {ev.event_id}: attendee {a} is not a contact"
                out.append(Problem("unknown_attendee", msg))
    for ch in w.chats:
        for p in ch.participants:
            if p not in contacts:
                msg = f"chat {ch.chat_id}: participant {p} is not a contact"
                out.append(Problem("unknown_participant", msg))
        for i, m in enumerate(ch.messages):
            if m.sender != "me" and m.sender not in ch.participants:
                msg = (
                    f"chat {ch.chat_id} message {i}: sender {m.sender} is not 'me' or a participant"
                )
                out.append(Problem("unknown_sender", msg))
    for d in w.documents:
        if d.author not in ("", "me") and d.author not in contacts:
            msg = f"document {d.document_id}: author {d.author} is not 'me' or a contact"
            out.append(Problem("unknown_author", msg))
    return out


def _times(w: World) -> list[Problem]:
    out = []
    for ev in w.events:
        if ev.end <= ev.start:
            msg = f"event {ev.event_id}: end {ev.end:%Y-%m-%d %H:%M} is not after start {ev.start:%Y-%m-%d %H:%M}"
            out.append(Problem("event_order", msg))
    # messages are the past: nothing is sent after the world's 'today'
    sent = [(f"email {e.email_id}", e.sent_at) for e in w.emails]
    sent += [
        (f"chat {c.chat_id} message {i}", m.sent_at)
        for c in w.chats
        for i, m in enumerate(c.messages)
    ]
    for where, at in sent:
        if at.date() > w.base_date:
            msg = f"{where}: sent {at:%Y-%m-%d}, after base date {w.base_date}"
            out.append(Problem("sent_in_future", msg))
    return out


def _documents(w: World) -> list[Problem]:
    out = []
    seen: dict[str, str] = {}
    for d in w.documents:
        # Documents become files in one workspace: two with one name would overwrite each other.
        other = seen.setdefault(d.filename.lower(), d.document_id)
        if other != d.document_id:
            out.append(Problem("duplicate_filename",
                               f"document {d.document_id}: filename {d.filename} is also document {other}'s"))
        out.extend(_line_items(d))
        for s in d.sheets:
            out.extend(_sheet(d, s))
    return out


def _line_items(d: Document) -> list[Problem]:
    where = f"document {d.document_id}"
    out = []
    numbers = [(li.quantity, li.unit_price, li.amount) for li in d.line_items]
    if not all(_num(x) for row in numbers for x in row) or not (d.total is None or _num(d.total)):
        return [
            Problem(
                "invoice_line",
                f"{where}: a quantity, price, amount or total is not a finite number",
            )
        ]
    for i, li in enumerate(d.line_items):
        if abs(li.amount - li.quantity * li.unit_price) > CENT:
            msg = f"{where} line {i} ({li.description}): amount {li.amount:.2f} != {li.quantity:g} x {li.unit_price:.2f}"
            out.append(Problem("invoice_line", msg))
    if d.line_items:
        sub = sum(li.amount for li in d.line_items)
        want = sub + sub * d.tax_rate
        if d.total is None:
            out.append(Problem("invoice_total", f"{where}: has line items but no total"))
        elif abs(d.total - want) > 0.01 + 1e-9:
            tax = f" + {d.tax_rate:.0%} tax" if d.tax_rate else ""
            msg = f"{where}: total {d.total:.2f} != sum of line items {sub:.2f}{tax} = {want:.2f}"
            out.append(Problem("invoice_total", msg))
    for k, v in d.fields.items():
        if (
            "total" in k.lower()
            and d.total is not None
            and not any(abs(a - d.total) <= CENT for a in parse_amounts(v))
        ):
            msg = f"{where}: field {k!r} = {v!r} does not state the total {d.total:.2f}"
            out.append(Problem("field_total", msg))
    return out


def _sheet(d: Document, s: Sheet) -> list[Problem]:
    where = f"document {d.document_id} sheet {s.name!r}"
    out = [
        Problem("sheet_shape", f"{where} row {i}: {len(r)} cells for {len(s.columns)} columns")
        for i, r in enumerate(s.rows)
        if len(r) != len(s.columns)
    ]
    if s.total_column is None or out:
        return out
    if s.total_column not in s.columns:
        return [Problem("sheet_total", f"{where}: total column {s.total_column!r} is not a column")]
    if not s.rows:
        return [Problem("sheet_total", f"{where}: has a total column but no total row")]
    col = s.columns.index(s.total_column)
    vals = [r[col] for r in data_rows(s)]
    bad = [v for v in vals if v is not None and not _num(v)]
    if bad:
        return [
            Problem(
                "sheet_total", f"{where}: column {s.total_column!r} holds non-numbers {bad[:3]}"
            )
        ]
    want, got = sum(v for v in vals if v is not None), s.rows[-1][col]  # type: ignore[misc]
    if not _num(got) or abs(got - want) > CENT:  # type: ignore[operator]
        return [
            Problem(
                "sheet_total", f"{where}: total row {got} != sum of {s.total_column!r} {want:.2f}"
            )
        ]
    return []


def _facts(w: World) -> list[Problem]:
    out = []
    for f in w.facts:
        p = _fact_value(f)
        if p or not f.source:
            out += [p] if p else []
            continue
        try:
            want = resolve(w, f.source)
        except (SourceError, ArithmeticError, IndexError, TypeError, ValueError) as e:
            out.append(Problem("fact_source_invalid", f"fact {f.key}: {e}"))
            continue
        if not _same(f.value, want):
            msg = f"fact {f.key}: value {f.value!r} != {want!r} recomputed from {f.source}"
            out.append(Problem("fact_source", msg))
    return out


def _fact_value(f: Fact) -> Problem | None:
    if f.kind in ("money", "number") and not _num(f.value):
        return Problem("fact_value", f"fact {f.key}: {f.kind} value {f.value!r} is not a number")
    if f.kind == "date":
        try:
            date.fromisoformat(str(f.value))
        except ValueError:
            msg = f"fact {f.key}: date value {f.value!r} is not an ISO date (YYYY-MM-DD)"
            return Problem("fact_value", msg)
    return None


def _same(a: object, b: object) -> bool:
    if _num(a) and _num(b):
        return abs(a - b) <= CENT  # type: ignore[operator]
    return str(a).strip() == str(b).strip()


def quotes(text: str, f: Fact) -> bool:
    """Whether ``text`` states the fact's value in a form people write it."""
    if f.kind in ("money", "number") and _num(f.value):
        return find_number(text, abs(f.value)) or find_number(text, f.value)  # type: ignore[arg-type]
    if f.kind == "date":
        try:
            return find_date(text, date.fromisoformat(str(f.value)))
        except ValueError:
            return False
    return _norm(str(f.value)) in _norm(text)


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip().lower()


def _citations(w: World) -> list[Problem]:
    facts = {f.key: f for f in w.facts}
    texts = [(f"email {e.email_id}", e.subject + "\n" + e.body, e.cites) for e in w.emails]
    texts += [
        (f"chat {c.chat_id} message {i}", m.text, m.cites)
        for c in w.chats
        for i, m in enumerate(c.messages)
    ]
    texts += [(f"note {n.note_id}", n.title + "\n" + n.body, n.cites) for n in w.notes]
    out = []
    for where, text, cites in texts:
        for key in cites:
            f = facts.get(key)
            if f is None:
                out.append(Problem("unknown_cite", f"{where}: cites {key}, which is not a fact"))
            elif not _fact_value(f) and not quotes(text, f):
                msg = f"{where}: cites {key} = {f.value!r}, but the text does not state it"
                out.append(Problem("cite_missing", msg))
    return out


# "Total: €412.50", "a total of 1.234,50 €", "total amount due is $99.00"
_TOTAL = re.compile(r"\btotal\b[^\n\d]{0,40}?(" + AMOUNT_RE + ")", re.IGNORECASE)


def _quoted_totals(w: World) -> list[Problem]:
    """An email that attaches a document with a total and writes 'total ... <amount>' must
    write that document's total (or the total of another attachment or a cited fact)."""
    docs = {d.document_id: d for d in w.documents}
    facts = {f.key: f for f in w.facts}
    out = []
    for e in w.emails:
        allowed = _totals(e, docs, facts)
        if not allowed:
            continue
        for m in _TOTAL.finditer(e.body):
            token = m.group(1)
            if not re.search(r"[.,]\d{2}$", token):
                continue  # "a total of 3 nights" is a count, not an amount
            if not any(abs(a - t) <= CENT for a in parse_amounts(token) for t in allowed):
                shown = ", ".join(f"{t:.2f}" for t in sorted(allowed))
                msg = f"email {e.email_id}: says total {token.strip()} but its attachments total {shown}"
                out.append(Problem("quoted_total", msg))
    return out


def _totals(e: Email, docs: dict[str, Document], facts: dict[str, Fact]) -> set[float]:
    out: set[float] = set()
    for a in e.attachments:
        d = docs.get(a)
        if d is None:
            continue
        if _num(d.total) and all(_num(li.amount) for li in d.line_items):
            out |= {float(d.total), round(sum(li.amount for li in d.line_items), 2)}  # type: ignore[arg-type]
        out |= {t for s in d.sheets if (t := _sheet_total(s)) is not None}
    if not out:
        return out
    # a cited fact may justify another total, unless it is sourced from an attachment itself
    # (then it must equal that attachment's total, and a stale copy must not excuse a stale quote)
    own = tuple(f"doc:{a}." for a in e.attachments)
    cited = [f for k in e.cites if (f := facts.get(k)) and _num(f.value)]
    return out | {float(f.value) for f in cited if not f.source.startswith(own)}


def _sheet_total(s: Sheet) -> float | None:
    if not s.total_column or not s.rows or s.total_column not in s.columns:
        return None
    i = s.columns.index(s.total_column)
    v = s.rows[-1][i] if i < len(s.rows[-1]) else None
    return float(v) if _num(v) else None  # type: ignore[arg-type]
