"""Fact sources: a small path language that says where a fact's value comes from, so that a
builder can compute it and the consistency check can recompute it.

    doc:<id>.total | .subtotal | .tax | .items | .field:<name>
    doc:<id>.sheet:<name>.total | .rows | .sum:<col> | .avg:<col> | .min:<col> | .max:<col>
    doc:<id>.sheet:<name>.count:<col>=<value> | .argmax:<col>-><col2> | .argmin:<col>-><col2>
    doc:<id>.sheet:<name>.find:<col>=<value>-><col2>   (col2 of the first row whose col is value)
    doc:<id>.table:<heading>.<any sheet operation>     (the table of a text section)
    event:<id>.start | .end | .date | .time | .title | .location
    contact:<id>.name | .email | .phone | .organization
    tx:<id>.amount | .date | .payee         txsum:<category>
    sum:<source>|<source>|...              diff:<source>|<source>
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Protocol

from guiforge.worlds.model import Contact, Document, Event, Sheet, Transaction

Value = float | int | str | date


class SourceError(ValueError):
    """The source does not parse or points at something the world lacks."""


class WorldView(Protocol):
    @property
    def documents(self) -> Sequence[Document]: ...
    @property
    def events(self) -> Sequence[Event]: ...
    @property
    def contacts(self) -> Sequence[Contact]: ...
    @property
    def transactions(self) -> Sequence[Transaction]: ...


def cents(x: float | Decimal) -> float:
    return float(Decimal(str(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def subtotal(doc: Document) -> float:
    return cents(sum(Decimal(str(li.amount)) for li in doc.line_items))


def resolve(world: WorldView, source: str) -> Value:
    kind, sep, rest = source.partition(":")
    if not sep or not rest:
        raise SourceError(f"source {source!r} must look like '<kind>:<path>'")
    if kind in ("sum", "diff"):
        parts = [_number(world, p) for p in rest.split("|")]
        if kind == "diff" and len(parts) != 2:
            raise SourceError(f"source {source!r}: diff takes exactly two sources")
        return cents(sum(parts) if kind == "sum" else parts[0] - parts[1])
    if kind == "doc":
        doc, attr = _split(rest, [d.document_id for d in world.documents], "document", source)
        return _doc(next(d for d in world.documents if d.document_id == doc), attr, source)
    if kind == "event":
        eid, attr = _split(rest, [e.event_id for e in world.events], "event", source)
        ev = next(e for e in world.events if e.event_id == eid)
        vals = {"start": ev.start.isoformat(timespec="minutes"), "end": ev.end.isoformat(timespec="minutes"),
                "date": ev.start.date().isoformat(), "time": ev.start.strftime("%H:%M"), "title": ev.title,
                "location": ev.location}  # fmt: skip
        return _pick(vals, attr, source)
    if kind == "contact":
        cid, attr = _split(rest, [c.contact_id for c in world.contacts], "contact", source)
        c = next(c for c in world.contacts if c.contact_id == cid)
        return _pick(
            {"name": c.name, "email": c.email, "phone": c.phone, "organization": c.organization},
            attr,
            source,
        )
    if kind == "tx":
        tid, attr = _split(
            rest, [t.transaction_id for t in world.transactions], "transaction", source
        )
        t = next(t for t in world.transactions if t.transaction_id == tid)
        return _pick(
            {"amount": t.amount, "date": t.booked_on.isoformat(), "payee": t.payee}, attr, source
        )
    if kind == "txsum":
        return cents(sum(Decimal(str(t.amount)) for t in world.transactions if t.category == rest))
    raise SourceError(
        f"source {source!r}: unknown kind {kind!r} (doc, event, contact, tx, txsum, sum, diff)"
    )


def _number(world: WorldView, source: str) -> float:
    v = resolve(world, source.strip())
    if not isinstance(v, int | float):
        raise SourceError(f"source {source!r} is not a number, cannot add it up")
    return float(v)


def _split(rest: str, ids: list[str], what: str, source: str) -> tuple[str, str]:
    # ids may contain dots, so match known ids instead of splitting at the first dot
    for i in sorted(ids, key=len, reverse=True):
        if rest.startswith(i + "."):
            return i, rest[len(i) + 1 :]
    raise SourceError(f"source {source!r}: no {what} matches (have: {', '.join(ids) or 'none'})")


def _pick(vals: dict[str, Value], attr: str, source: str) -> Value:
    if attr not in vals:
        raise SourceError(
            f"source {source!r}: unknown attribute {attr!r} (one of {', '.join(vals)})"
        )
    return vals[attr]


def _doc(doc: Document, attr: str, source: str) -> Value:
    if attr in ("total", "subtotal", "tax", "items"):
        if attr == "items":
            return len(doc.line_items)
        if attr == "subtotal":
            return subtotal(doc)
        if doc.total is None:
            raise SourceError(f"source {source!r}: document {doc.document_id} has no total")
        return doc.total if attr == "total" else cents(doc.total - subtotal(doc))
    if attr.startswith("field:"):
        name = attr[len("field:") :]
        if name not in doc.fields:
            raise SourceError(
                f"source {source!r}: document {doc.document_id} has no field {name!r}"
            )
        return doc.fields[name]
    if attr.startswith("sheet:"):
        sheet, what = _split(attr[len("sheet:") :], [s.name for s in doc.sheets], "sheet", source)
        return _sheet(next(s for s in doc.sheets if s.name == sheet), what, source)
    if attr.startswith("table:"):
        headings = [x.heading for x in doc.sections if x.table is not None]
        heading, what = _split(attr[len("table:") :], headings, "section table", source)
        return _sheet(_table_sheet(doc, heading), what, source)
    raise SourceError(f"source {source!r}: unknown document attribute {attr!r}")


def _table_sheet(doc: Document, heading: str) -> Sheet:
    """A section's table as a sheet, so every sheet operation reads it; cells that are plain
    numbers count as numbers (a table holds text)."""
    t = next(x.table for x in doc.sections if x.heading == heading and x.table is not None)
    rows: list[list[str | float | int | None]] = [[_plain_number(c) for c in r] for r in t.rows]
    return Sheet.model_construct(name=heading, columns=t.columns, rows=rows, total_column=None)


def _plain_number(cell: str) -> str | float | int:
    try:
        f = float(cell)
    except ValueError:
        return cell
    return int(f) if f == int(f) and "." not in cell else f


def data_rows(sheet: Sheet) -> list[list[str | float | int | None]]:
    return sheet.rows[:-1] if sheet.total_column else sheet.rows


def column(sheet: Sheet, name: str, source: str) -> int:
    if name not in sheet.columns:
        raise SourceError(f"source {source!r}: sheet {sheet.name!r} has no column {name!r}")
    return sheet.columns.index(name)


def _sheet(sheet: Sheet, what: str, source: str) -> Value:
    rows = data_rows(sheet)
    if what == "rows":
        return len(rows)
    if what == "total":
        if not sheet.total_column or not sheet.rows:
            raise SourceError(f"source {source!r}: sheet {sheet.name!r} has no total row")
        v = sheet.rows[-1][column(sheet, sheet.total_column, source)]
        if not isinstance(v, int | float):
            raise SourceError(f"source {source!r}: total cell is not a number")
        return v
    op, _, arg = what.partition(":")
    if op == "count":
        col, _, want = arg.partition("=")
        i = column(sheet, col, source)
        return sum(1 for r in rows if str(r[i]) == want)
    if op == "find":
        cond, _, out = arg.partition("->")
        col, _, want = cond.partition("=")
        i, j = column(sheet, col, source), column(sheet, out, source)
        row = next((r for r in rows if str(r[i]) == want), None)
        if row is None:
            raise SourceError(f"source {source!r}: no row with {col} = {want!r}")
        return row[j] if row[j] is not None else ""
    if op in ("argmax", "argmin"):
        col, _, out = arg.partition("->")
        i, j = column(sheet, col, source), column(sheet, out, source)
        pick = max if op == "argmax" else min
        row = pick(rows, key=lambda r: _num(r[i], source))
        return row[j] if row[j] is not None else ""
    if op in ("sum", "avg", "min", "max"):
        i = column(sheet, arg, source)
        nums = [_num(r[i], source) for r in rows if r[i] is not None]
        if not nums:
            raise SourceError(f"source {source!r}: column {arg!r} is empty")
        agg = {"sum": sum, "min": min, "max": max, "avg": lambda xs: sum(xs) / len(xs)}[op]
        return cents(agg(nums))
    raise SourceError(f"source {source!r}: unknown sheet attribute {what!r}")


def _num(v: object, source: str) -> float:
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    raise SourceError(f"source {source!r}: cell {v!r} is not a number")
