"""World slide decks as .pptx (python-pptx): each slide on its layout (pptx_layouts: title,
section, content, two content, comparison, chart, picture) with speaker notes, and optionally a table slide and a bar-chart slide built from a spreadsheet's
figures (so a deck and a workbook of the same world show the same numbers)."""

from __future__ import annotations

import io

from pptx import Presentation
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE, XL_LEGEND_POSITION
from pptx.oxml.ns import qn
from pptx.util import Emu, Inches, Pt

from guiforge.preparers.file_common import (
    FileFormatError,
    is_money_column,
    issuer,
    money,
    normalize_package,
    plain_number,
    world_clock,
)
from guiforge.preparers.pptx_layouts import add_slide
from guiforge.worlds.model import Document, Sheet, World
from guiforge.worlds.sources import data_rows

TITLE_ONLY_LAYOUT = 5
WIDE = Inches(13.333)
MAX_TABLE_ROWS = 14  # more rows than this do not fit a 16:9 slide at a readable size


def document_pptx(
    world: World, doc: Document, figures: list[tuple[Document, Sheet, bool]] | None = None
) -> bytes:
    """The deck of a slides document; ``figures`` appends a table slide, and a chart slide
    when its flag is set, for each (spreadsheet document, sheet, chart)."""
    if not doc.slides:
        raise FileFormatError(
            f"document {doc.document_id} ({doc.kind}) has no slides to write as pptx; "
            "use docx, pdf, md or txt"
        )
    prs = _widescreen(Presentation())
    for n, s in enumerate(doc.slides):
        add_slide(prs, s, n)
    for src, sheet, chart in figures or []:
        _table_slide(prs, world, src, sheet)
        if chart:
            _chart_slide(prs, src, sheet)
    return _save(prs, world, doc)


def _widescreen(prs: Presentation) -> Presentation:
    """16:9 slides. The default template's placeholders are laid out for 4:3, so stretch every
    explicit placeholder box on the master and the layouts horizontally (boxes a layout
    inherits follow the master). Raw XML: python-pptx's inherited-position look-ups are slow."""
    ratio = WIDE / prs.slide_width
    prs.slide_width = Emu(WIDE)
    parts = [prs.slide_master, *prs.slide_layouts]
    for part in parts:
        for ph in part.placeholders:
            xfrm = ph._element.spPr.find(qn("a:xfrm"))
            if xfrm is None:
                continue
            off, ext = xfrm.find(qn("a:off")), xfrm.find(qn("a:ext"))
            off.set("x", str(int(int(off.get("x")) * ratio)))
            ext.set("cx", str(int(int(ext.get("cx")) * ratio)))
    prs.part._element.sldSz.set("type", "screen16x9")
    return prs


def _save(prs: Presentation, world: World, doc: Document) -> bytes:
    when = world_clock(world)
    cp = prs.core_properties
    cp.title, cp.author, cp.last_modified_by = doc.title, issuer(world, doc).name, ""
    cp.created = cp.modified = when
    cp.revision = 1
    buf = io.BytesIO()
    prs.save(buf)
    return normalize_package(buf.getvalue(), when)


def _cell_text(world: World, src: Document, sheet: Sheet, j: int, v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, int | float) and not isinstance(v, bool):
        return money(world, v) if is_money_column(src, sheet, j) else plain_number(v)
    return str(v)


def _title(slide, text: str) -> None:
    """A figure slide's title, sized to stay on one line above the figure."""
    title = slide.shapes.title
    title.text = text
    left, width = title.left, title.width  # inherited from the layout; setting one sets all
    title.left, title.width, title.top, title.height = left, width, Inches(0.3), Inches(1.0)
    for run in title.text_frame.paragraphs[0].runs:
        run.font.size = Pt(28)


def _table_slide(prs: Presentation, world: World, src: Document, sheet: Sheet) -> None:
    slide = prs.slides.add_slide(prs.slide_layouts[TITLE_ONLY_LAYOUT])
    _title(slide, f"{src.title}: {sheet.name}")
    rows = sheet.rows[: MAX_TABLE_ROWS - 1]
    if len(sheet.rows) > len(rows) and sheet.total_column:
        rows = [*rows[:-1], sheet.rows[-1]]  # keep the total row when the table is cut
    left, top = Inches(0.5), Inches(1.5)
    width, height = prs.slide_width - Inches(1.0), Emu(Inches(0.4) * (len(rows) + 1))
    table = slide.shapes.add_table(
        len(rows) + 1, len(sheet.columns), left, top, width, height
    ).table
    for j, name in enumerate(sheet.columns):
        table.cell(0, j).text = name
    for i, row in enumerate(rows, start=1):
        for j, v in enumerate(row):
            cell = table.cell(i, j)
            cell.text = _cell_text(world, src, sheet, j, v)
            for p in cell.text_frame.paragraphs:
                for r in p.runs:
                    r.font.size = Pt(14)


def chart_series(src: Document, sheet: Sheet) -> tuple[int, int] | None:
    """(label column, value column) of a sheet's chartable figures: the total column (or the
    last all-number column) against the first text column."""
    rows = data_rows(sheet)
    numeric = [
        j
        for j in range(len(sheet.columns))
        if rows and all(isinstance(r[j], int | float) for r in rows)
    ]
    text = [j for j in range(len(sheet.columns)) if j not in numeric]
    if not numeric or not text:
        return None
    value = sheet.columns.index(sheet.total_column) if sheet.total_column else numeric[-1]
    return text[0], value


def _chart_slide(prs: Presentation, src: Document, sheet: Sheet) -> None:
    cols = chart_series(src, sheet)
    if cols is None:
        return
    label, value = cols
    rows = data_rows(sheet)
    data = CategoryChartData()
    data.categories = [str(r[label]) for r in rows]
    data.add_series(sheet.columns[value], [float(r[value]) for r in rows])  # type: ignore[arg-type]
    slide = prs.slides.add_slide(prs.slide_layouts[TITLE_ONLY_LAYOUT])
    _title(slide, f"{sheet.columns[value]} by {sheet.columns[label].lower()}")
    frame = slide.shapes.add_chart(
        XL_CHART_TYPE.COLUMN_CLUSTERED,
        Inches(0.75),
        Inches(1.5),
        prs.slide_width - Inches(1.5),
        Inches(5.5),
        data,
    )
    chart = frame.chart
    chart.has_legend = True
    chart.legend.position = XL_LEGEND_POSITION.BOTTOM
    chart.legend.include_in_layout = False
    plot = chart.plots[0]
    plot.has_data_labels = True
    plot.data_labels.number_format = "#,##0.00" if is_money_column(src, sheet, value) else "General"
    plot.data_labels.number_format_is_linked = False
