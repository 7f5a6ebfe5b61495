"""World documents as .pdf (reportlab): invoices, quotes and receipts in an invoice layout
(issuer, recipient, reference fields, line-item table, subtotal, tax, total, currency);
itineraries, forms and text documents as titled pages with a field table and paragraphs;
spreadsheets and slides as tables and sections.

Bytes are deterministic: reportlab's invariant mode fixes the document id, the info dates
are the world's clock, and a TrueType font (DejaVu Sans, which covers every locale the
worlds use: €, £, ₹, zł, ...) is embedded as a subset whose name depends only on its order.
"""

from __future__ import annotations

import io
from functools import cache
from pathlib import Path
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.enums import TA_RIGHT
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from guiforge.preparers.file_common import (
    is_money_column,
    issuer,
    money,
    plain_number,
    quantity_text,
    recipient,
    world_clock,
)
from guiforge.worlds.model import Document, Sheet, World
from guiforge.worlds.sources import cents, subtotal

FONT_DIRS = [
    Path("/usr/share/fonts/truetype/dejavu"),
    Path("/usr/share/fonts/dejavu"),
    Path("/usr/share/fonts/TTF"),
]
ACCENT = colors.HexColor("#305496")
FORM_BLANK = "_" * 30


@cache
def fonts() -> tuple[str, str]:
    """(regular, bold) font names: DejaVu Sans when installed, else Helvetica (Latin-1 only,
    so zł or ₹ would not survive: install fonts-dejavu-core)."""
    for d in FONT_DIRS:
        regular, bold = d / "DejaVuSans.ttf", d / "DejaVuSans-Bold.ttf"
        if regular.is_file() and bold.is_file():
            pdfmetrics.registerFont(TTFont("GFSans", str(regular)))
            pdfmetrics.registerFont(TTFont("GFSans-Bold", str(bold)))
            pdfmetrics.registerFontFamily(
                "GFSans",
                normal="GFSans",
                bold="GFSans-Bold",
                italic="GFSans",
                boldItalic="GFSans-Bold",
            )
            return "GFSans", "GFSans-Bold"
    return "Helvetica", "Helvetica-Bold"


@cache
def styles() -> dict[str, ParagraphStyle]:
    regular, bold = fonts()
    base = getSampleStyleSheet()
    return {
        "title": ParagraphStyle(
            "gf-title",
            parent=base["Title"],
            fontName=bold,
            fontSize=18,
            leading=22,
            alignment=0,
            textColor=ACCENT,
        ),
        "h1": ParagraphStyle("gf-h1", parent=base["Heading1"], fontName=bold, fontSize=14,
                             leading=18, textColor=ACCENT, spaceBefore=8),
        "h2": ParagraphStyle("gf-h2", parent=base["Heading2"], fontName=bold, fontSize=12),
        "h3": ParagraphStyle("gf-h3", parent=base["Heading3"], fontName=bold, fontSize=10.5),
        "bullet": ParagraphStyle("gf-bullet", parent=base["BodyText"], fontName=regular,
                                 fontSize=10, leading=14, leftIndent=12, bulletIndent=2),
        "body": ParagraphStyle(
            "gf-body", parent=base["BodyText"], fontName=regular, fontSize=10, leading=14
        ),
        "small": ParagraphStyle(
            "gf-small", parent=base["BodyText"], fontName=regular, fontSize=9, leading=12
        ),
        "bold": ParagraphStyle("gf-bold", parent=base["BodyText"], fontName=bold, fontSize=10),
        "right": ParagraphStyle(
            "gf-right", parent=base["BodyText"], fontName=regular, fontSize=10, alignment=TA_RIGHT
        ),
    }


def _p(text: str, style: str = "body") -> Paragraph:
    return Paragraph(escape(text), styles()[style])


def _lines(lines: list[str], style: str) -> Paragraph:
    return Paragraph("<br/>".join(escape(x) for x in lines), styles()[style])


def document_pdf(world: World, doc: Document) -> bytes:
    story: list = []
    if doc.line_items:
        story += _invoice(world, doc)
    else:
        story += _general(world, doc)
    return _build(world, doc, story)


def _build(world: World, doc: Document, story: list) -> bytes:
    when = world_clock(world)
    stamp = when.strftime("D:%Y%m%d%H%M%S+00'00'")
    regular, _ = fonts()
    label = f"{doc.title}"

    def decorate(canvas, tpl) -> None:
        canvas.setDateFormatter(lambda *_: stamp)
        canvas.saveState()
        canvas.setFont(regular, 8)
        canvas.setFillColor(colors.grey)
        canvas.drawString(tpl.leftMargin, 12 * mm, label[:90])
        canvas.drawRightString(A4[0] - tpl.rightMargin, 12 * mm, f"Page {canvas.getPageNumber()}")
        canvas.restoreState()

    buf = io.BytesIO()
    tpl = SimpleDocTemplate(
        buf,
        pagesize=A4,
        leftMargin=20 * mm,
        rightMargin=20 * mm,
        topMargin=18 * mm,
        bottomMargin=22 * mm,
        title=doc.title,
        author=issuer(world, doc).name,
        creator="guiforge",
        producer="guiforge",
        subject=doc.kind,
        invariant=1,
    )
    tpl.build(story, onFirstPage=decorate, onLaterPages=decorate)
    return buf.getvalue()


def _grid_style(header: bool = True, extra: list | None = None) -> TableStyle:
    regular, bold = fonts()
    cmds: list = [
        ("FONTNAME", (0, 0), (-1, -1), regular),
        ("FONTSIZE", (0, 0), (-1, -1), 9),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("GRID", (0, 0), (-1, -1), 0.4, colors.HexColor("#B4BCCB")),
    ]
    if header:
        cmds += [
            ("BACKGROUND", (0, 0), (-1, 0), ACCENT),
            ("TEXTCOLOR", (0, 0), (-1, 0), colors.white),
            ("FONTNAME", (0, 0), (-1, 0), bold),
        ]
    return TableStyle(cmds + (extra or []))


def _field_rows(doc: Document) -> list[list]:
    blank = FORM_BLANK if doc.kind == "form" else ""
    return [[_p(k, "bold"), _p(v or blank)] for k, v in doc.fields.items()]


def _invoice_word(doc: Document) -> str:
    if doc.kind == "receipt":
        return "Receipt"
    title = doc.title.lower()
    return "Quote" if "quote" in title or "estimate" in title else "Invoice"


def _invoice(world: World, doc: Document) -> list:
    frm, to = issuer(world, doc), recipient(world, doc)
    kind = _invoice_word(doc)
    head = [[_p(frm.organization or frm.name, "h2"), _p(kind.upper(), "title")]]
    head += [[_lines([x for x in frm.lines() if x != frm.organization], "small"), ""]]
    story: list = [
        Table(
            head,
            colWidths=[110 * mm, 60 * mm],
            hAlign="LEFT",
            style=[("VALIGN", (0, 0), (-1, -1), "TOP")],
        ),
        Spacer(1, 4 * mm),
    ]
    story.append(_p(doc.title, "h2"))
    if to is not None:
        story += [_p({"Invoice": "Bill to", "Quote": "Quote for"}.get(kind, "Customer"), "bold")]
        story.append(_lines(to.lines(), "small"))
        story.append(Spacer(1, 3 * mm))
    if doc.fields:
        story += [
            Table(
                _field_rows(doc),
                colWidths=[45 * mm, 125 * mm],
                style=_grid_style(False),
                hAlign="LEFT",
            ),
            Spacer(1, 5 * mm),
        ]
    rows: list[list] = [["Description", "Quantity", "Unit price", "Amount"]]
    for li in doc.line_items:
        rows.append(
            [
                _p(li.description, "small"),
                quantity_text(world, li.quantity),
                money(world, li.unit_price),
                money(world, li.amount),
            ]
        )
    sub = subtotal(doc)
    total = doc.total if doc.total is not None else sub
    sums = [("Subtotal", sub)]
    if doc.tax_rate:
        sums.append((f"Tax ({doc.tax_rate:.0%})", cents(total - sub)))
    sums.append(("Total", total))
    first_sum = len(rows)
    rows += [["", "", label, money(world, value)] for label, value in sums]
    _, bold = fonts()
    regular = fonts()[0]
    style = TableStyle(
        [
            ("FONTNAME", (0, 0), (-1, -1), regular),
            ("FONTSIZE", (0, 0), (-1, -1), 9),
            ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ("BACKGROUND", (0, 0), (-1, 0), ACCENT),
            ("TEXTCOLOR", (0, 0), (-1, 0), colors.white),
            ("FONTNAME", (0, 0), (-1, 0), bold),
            ("GRID", (0, 0), (-1, first_sum - 1), 0.4, colors.HexColor("#B4BCCB")),
            ("ALIGN", (1, 0), (-1, -1), "RIGHT"),
            ("FONTNAME", (2, first_sum), (-1, -1), bold),
            ("LINEABOVE", (2, -1), (-1, -1), 1.2, colors.black),
            ("BACKGROUND", (2, -1), (-1, -1), colors.HexColor("#E8ECF4")),
        ]
    )
    story.append(
        Table(
            rows,
            colWidths=[85 * mm, 22 * mm, 30 * mm, 33 * mm],
            repeatRows=1,
            style=style,
            hAlign="LEFT",
        )
    )
    story += [Spacer(1, 4 * mm), _p(f"All amounts in {doc.currency or world.currency}.", "small")]
    if doc.kind == "receipt":
        story.append(_p("Paid in full. Thank you.", "small"))
    return story


def _general(world: World, doc: Document) -> list:
    story: list = [_p(doc.title, "title"), Spacer(1, 2 * mm)]
    author = issuer(world, doc)
    story += [_p(f"From: {', '.join(author.lines()[:2])}", "small"), Spacer(1, 4 * mm)]
    if doc.fields:
        if doc.kind == "form":
            story.append(_p("Please complete every field and return this form."))
        story += [
            Table(
                _field_rows(doc),
                colWidths=[50 * mm, 120 * mm],
                style=_grid_style(False),
                hAlign="LEFT",
            ),
            Spacer(1, 5 * mm),
        ]
    if doc.paragraphs and doc.kind == "itinerary":
        story.append(_p("Notes", "h2"))
    story += [_p(text) for text in doc.paragraphs]
    story += _sections(doc)
    for sheet in doc.sheets:
        story += [_p(sheet.name, "h2"), _sheet_table(world, doc, sheet), Spacer(1, 4 * mm)]
    for n, s in enumerate(doc.slides, start=1):
        story.append(_p(f"{n}. {s.title}", "h2"))
        story += [_p(f"\u2022 {b}") for b in s.bullets]
        if s.notes:
            story.append(_p(f"Speaker notes: {s.notes}", "small"))
    return story


CALLOUT = {"note": ("#DEEAF6", "#2E75B6", "Note"), "warning": ("#FFF2CC", "#BF8F00", "Important")}


def _sections(doc: Document) -> list:
    """Headed sections: heading styles by level, bullets, a table whose cells stay whole
    for pdftotext, and note/warning paragraphs in a shaded box."""
    story: list = []
    for s in doc.sections:
        story.append(_p(s.heading, f"h{s.level}"))
        if s.style in CALLOUT:
            fill, line, label = CALLOUT[s.style]
            box = [[Paragraph(f"<b>{label}:</b> {escape(t)}", styles()["body"])] for t in s.paragraphs]
            if box:
                story.append(Table(box, colWidths=[170 * mm], hAlign="LEFT", style=[
                    ("BACKGROUND", (0, 0), (-1, -1), colors.HexColor(fill)),
                    ("LINEBEFORE", (0, 0), (0, -1), 2.5, colors.HexColor(line)),
                    ("BOX", (0, 0), (-1, -1), 0.4, colors.HexColor(line))]))  # fmt: skip
        else:
            story += [_p(t) for t in s.paragraphs]
        story += [Paragraph(escape(b), styles()["bullet"], bulletText="\u2022") for b in s.bullets]
        if s.table is not None:
            if s.table.caption:
                story.append(_p(s.table.caption, "small"))
            story += [_fitted([list(s.table.columns), *s.table.rows], []), Spacer(1, 3 * mm)]
    return story


def _sheet_table(world: World, doc: Document, sheet: Sheet) -> Table:
    money_cols = {j for j in range(len(sheet.columns)) if is_money_column(doc, sheet, j)}
    rows: list[list[str]] = [list(sheet.columns)]
    for row in sheet.rows:
        cells: list[str] = []
        for j, v in enumerate(row):
            if v is None:
                cells.append("")
            elif isinstance(v, int | float) and not isinstance(v, bool):
                cells.append(money(world, v) if j in money_cols else plain_number(v))
            else:
                cells.append(str(v))
        rows.append(cells)
    numeric = [
        j
        for j in range(len(sheet.columns))
        if all(isinstance(r[j], int | float | None) for r in sheet.rows)
    ]
    extra = [("ALIGN", (j, 1), (j, -1), "RIGHT") for j in numeric]
    if sheet.total_column:
        extra.append(("FONTNAME", (0, -1), (-1, -1), fonts()[1]))
    return _fitted(rows, extra, bold_last=bool(sheet.total_column))


def _fitted(rows: list[list[str]], extra: list, bold_last: bool = False) -> Table:
    """A table whose cells stay on one line (so pdftotext keeps each value whole): the font
    shrinks until the widest row fits the page; only then do the widest columns wrap."""
    regular, bold = fonts()
    avail = A4[0] - 40 * mm
    for size in (9, 8, 7):
        last = len(rows) - 1
        widths = [
            max(
                pdfmetrics.stringWidth(
                    r[j], bold if i == 0 or (bold_last and i == last) else regular, size
                )
                for i, r in enumerate(rows)
            )
            + 14
            for j in range(len(rows[0]))
        ]
        if sum(widths) <= avail:
            style = _grid_style(True, [*extra, ("FONTSIZE", (0, 0), (-1, -1), size)])
            return Table(rows, colWidths=widths, repeatRows=1, style=style, hAlign="LEFT")
    share = avail / len(widths)
    narrow = sum(w for w in widths if w <= share)
    wide = [j for j, w in enumerate(widths) if w > share]
    room = (avail - narrow) / len(wide)
    widths = [w if w <= share else room for w in widths]
    wrapped = [
        [_p(c, "small") if j in wide and i else c for j, c in enumerate(r)]
        for i, r in enumerate(rows)
    ]
    style = _grid_style(True, [*extra, ("FONTSIZE", (0, 0), (-1, -1), 7)])
    return Table(wrapped, colWidths=widths, repeatRows=1, style=style, hAlign="LEFT")
