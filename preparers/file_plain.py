"""Plain-text files from a world: sheets as CSV (clean, or with recorded dirt for "fix the
CSV" tasks), documents and notes as Markdown or plain text.

Dirty CSV: ``sheet_csv(..., dirty=True, seed=n)`` adds, deterministically from the seed, one
duplicated data row, one blank line, two numbers of one column written in other formats
(currency symbol, thousands separator, decimal comma, padding) and, when the sheet has a date
column, one date as DD/MM/YYYY. Every change is returned as a ``CsvDirt`` naming its line in
the dirty file, its column, the clean and the dirty text, so a rubric can check each was fixed.
"""

from __future__ import annotations

import csv
import io
import random
from typing import Literal

from pydantic import BaseModel

from guiforge.preparers.file_common import (
    ISO_DATE,
    is_money_column,
    issuer,
    locale_of,
    money,
    plain_number,
    quantity_text,
)
from guiforge.worlds.model import Document, Note, Sheet, World
from guiforge.worlds.sources import cents, data_rows, subtotal

DirtKind = Literal["duplicate_row", "blank_line", "number_format", "date_format"]


class CsvDirt(BaseModel):
    kind: DirtKind
    line: int  # 1-based line in the dirty file (the header is line 1)
    column: str = ""
    clean: str = ""  # the value as the clean file writes it ('' for a blank line)
    dirty: str = ""  # what the dirty file holds instead
    note: str = ""


def find_sheet(doc: Document, name: str | None) -> Sheet:
    if not doc.sheets:
        raise ValueError(f"document {doc.document_id} ({doc.kind}) has no sheets to export")
    if name is None:
        return doc.sheets[0]
    for s in doc.sheets:
        if s.name == name:
            return s
    have = ", ".join(s.name for s in doc.sheets)
    raise ValueError(f"document {doc.document_id} has no sheet {name!r} (have: {have})")


def csv_cell(doc: Document, sheet: Sheet, j: int, v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, int | float) and not isinstance(v, bool):
        return f"{float(v):.2f}" if is_money_column(doc, sheet, j) else plain_number(v)
    return str(v)


def sheet_csv(
    world: World,
    doc: Document,
    sheet_name: str | None = None,
    total_row: bool = True,
    dirty: bool = False,
    seed: int = 0,
) -> tuple[bytes, list[CsvDirt]]:
    sheet = find_sheet(doc, sheet_name)
    body = data_rows(sheet)
    rows: list[list[str] | None] = [
        [csv_cell(doc, sheet, j, v) for j, v in enumerate(r)] for r in body
    ]
    tail = []
    if total_row and sheet.total_column:
        tail = [[csv_cell(doc, sheet, j, v) for j, v in enumerate(sheet.rows[-1])]]
    dirt: list[tuple[CsvDirt, list[str] | None]] = []
    if dirty and len(rows) >= 3:
        dirt = _dirty(
            world, doc, sheet, rows, random.Random(f"{seed}:{doc.document_id}:{sheet.name}")
        )
    records = [sheet.columns, *rows, *tail]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for rec in records:
        if rec is None:
            out.write("\n")
        else:
            writer.writerow(rec)
    for d, rec in dirt:  # line numbers once every insertion is in place
        d.line = next(i for i, r in enumerate(records, start=1) if r is rec)
    return out.getvalue().encode("utf-8"), [d for d, _ in sorted(dirt, key=lambda x: x[0].line)]


def _dirty(
    world: World, doc: Document, sheet: Sheet, rows: list[list[str] | None], rng: random.Random
) -> list[tuple[CsvDirt, list[str] | None]]:
    out: list[tuple[CsvDirt, list[str] | None]] = []
    n = len(rows)
    numeric = [
        j
        for j in range(len(sheet.columns))
        if all(isinstance(r[j], int | float) for r in data_rows(sheet))
    ]
    value_col = (
        sheet.columns.index(sheet.total_column)
        if sheet.total_column
        else (numeric[-1] if numeric else None)
    )
    filled = [k for k in range(n) if value_col is not None and (rows[k] or [""])[value_col]]
    if value_col is not None and filled:
        picks = rng.sample(filled, min(2, len(filled)))
        styles = rng.sample(
            ["currency_symbol", "thousands_separator", "decimal_comma", "padded"], len(picks)
        )
        for k, style in zip(picks, styles, strict=True):
            row = rows[k]
            assert row is not None
            clean = row[value_col]
            row[value_col], how = _restyle(world, clean, style)
            d = CsvDirt(
                kind="number_format",
                line=0,
                column=sheet.columns[value_col],
                clean=clean,
                dirty=row[value_col],
                note=how,
            )
            out.append((d, row))
    dates = [
        j
        for j in range(len(sheet.columns))
        if all(isinstance(r[j], str) and ISO_DATE.match(r[j]) for r in data_rows(sheet))
    ]
    if dates:
        j, k = dates[0], rng.randrange(n)
        row = rows[k]
        assert row is not None
        clean = row[j]
        row[j] = f"{clean[8:10]}/{clean[5:7]}/{clean[0:4]}"
        out.append(
            (
                CsvDirt(
                    kind="date_format",
                    line=0,
                    column=sheet.columns[j],
                    clean=clean,
                    dirty=row[j],
                    note="DD/MM/YYYY instead of YYYY-MM-DD",
                ),
                row,
            )
        )
    # a duplicate of row k lands later in the file, as merged exports do
    k = rng.randrange(n - 1)
    dup = list(rows[k] or [])
    at = rng.randrange(k + 1, n + 1)
    rows.insert(at, dup)
    out.append(
        (
            CsvDirt(
                kind="duplicate_row",
                line=0,
                clean="",
                dirty=_csv_line(dup),
                note=f"copy of data row {k + 1}",
            ),
            dup,
        )
    )
    blank_at = rng.randrange(1, len(rows))
    rows.insert(blank_at, None)
    out.append((CsvDirt(kind="blank_line", line=0, note="empty line between data rows"), None))
    return out


def _csv_line(row: list[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(row)
    return buf.getvalue()


def _restyle(world: World, clean: str, style: str) -> tuple[str, str]:
    """(the dirty text, what was done to it)."""
    v = float(clean)
    loc = locale_of(world)
    if style == "currency_symbol":
        text = f"{clean} {loc.symbol}" if loc.symbol_after else f"{loc.symbol}{clean}"
        return text, "currency symbol added"
    if style == "thousands_separator" and abs(v) >= 1000:
        return f"{v:,.2f}", "thousands separator added"
    if style in ("thousands_separator", "decimal_comma"):
        return f"{v:.2f}".replace(".", ","), "decimal comma instead of point"
    return f"  {clean} ", "padded with spaces"


# -- Markdown and plain text ---------------------------------------------------------------
def _md_cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[str]], markdown: bool) -> list[str]:
    if markdown:
        out = [
            "| " + " | ".join(map(_md_cell, header)) + " |",
            "|" + "|".join(" --- " for _ in header) + "|",
        ]
        return out + ["| " + " | ".join(map(_md_cell, r)) + " |" for r in rows]
    return ["\t".join(header), *("\t".join(r) for r in rows)]


def _heading(text: str, level: int, markdown: bool) -> list[str]:
    if markdown:
        return ["#" * level + " " + text, ""]
    return [text, ("=" if level == 1 else "-") * len(text), ""]


def document_text(world: World, doc: Document, markdown: bool = True) -> bytes:
    """Any document as Markdown (``markdown=True``) or plain text."""
    lines = _heading(doc.title, 1, markdown)
    author = issuer(world, doc)
    lines += [f"From: {', '.join(author.lines()[:2])}", ""]
    if doc.fields:
        rows = [[k, v] for k, v in doc.fields.items()]
        lines += _table(["Field", "Value"], rows, markdown) + [""]
    if doc.line_items:
        rows = [
            [
                li.description,
                quantity_text(world, li.quantity),
                money(world, li.unit_price),
                money(world, li.amount),
            ]
            for li in doc.line_items
        ]
        sub = subtotal(doc)
        total = doc.total if doc.total is not None else sub
        rows.append(["", "", "Subtotal", money(world, sub)])
        if doc.tax_rate:
            rows.append(["", "", f"Tax ({doc.tax_rate:.0%})", money(world, cents(total - sub))])
        rows.append(["", "", "Total", money(world, total)])
        lines += _table(["Description", "Quantity", "Unit price", "Amount"], rows, markdown)
        lines += ["", f"All amounts in {doc.currency or world.currency}.", ""]
    for p in doc.paragraphs:
        lines += [p, ""]
    lines += _sections(doc, markdown)
    for sheet in doc.sheets:
        money_cols = {j for j in range(len(sheet.columns)) if is_money_column(doc, sheet, j)}
        rows = [
            [
                money(world, v) if j in money_cols and v is not None else csv_cell(doc, sheet, j, v)
                for j, v in enumerate(r)
            ]
            for r in sheet.rows
        ]
        lines += _heading(sheet.name, 2, markdown) + _table(sheet.columns, rows, markdown) + [""]
    for n, s in enumerate(doc.slides, start=1):
        lines += _heading(f"{n}. {s.title}", 2, markdown)
        lines += [f"- {b}" for b in s.bullets] + [""]
        if s.notes:
            lines += [f"{'> ' if markdown else ''}Speaker notes: {s.notes}", ""]
    return ("\n".join(lines).rstrip() + "\n").encode("utf-8")


CALLOUT_LABEL = {"note": "Note", "warning": "Important"}


def _sections(doc: Document, markdown: bool) -> list[str]:
    """Sections one level below the title: Markdown headings, lists, pipe tables and
    blockquote callouts; in plain text, underlined headings and columns padded to line up."""
    lines: list[str] = []
    for s in doc.sections:
        lines += _heading(s.heading, s.level + 1, markdown)
        label = CALLOUT_LABEL.get(s.style)
        for p in s.paragraphs:
            if label:
                lines += [f"> **{label}:** {p}" if markdown else f"{label.upper()}: {p}", ""]
            else:
                lines += [p, ""]
        if s.bullets:
            lines += [f"- {b}" for b in s.bullets] + [""]
        if s.table is not None:
            if s.table.caption:
                lines += [f"*{s.table.caption}*" if markdown else s.table.caption, ""]
            if markdown:
                lines += _table(s.table.columns, s.table.rows, True)
            else:
                lines += _padded([s.table.columns, *s.table.rows])
            lines.append("")
    return lines


def _padded(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
    out = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    out.insert(1, "  ".join("-" * w for w in widths))
    return out


def note_markdown(note: Note) -> bytes:
    return f"# {note.title}\n\n{note.body.strip()}\n".encode()
