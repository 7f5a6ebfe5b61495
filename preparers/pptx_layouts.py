"""One world slide on one of the default template's real layouts (python-pptx): title,
section header, title and content, two content, comparison, title only, a native chart
(bar, line, pie: editable in Impress, values in the embedded workbook) and picture with
caption. A slide without a layout keeps the old rule: a title slide first, then content."""

from __future__ import annotations

import io

from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE, XL_LEGEND_POSITION
from pptx.util import Inches

from guiforge.preparers.slide_images import slide_image_bytes
from guiforge.worlds.model import Chart, Slide

# python-pptx's default template
LAYOUT_INDEX = {"title": 0, "content": 1, "section": 2, "two_content": 3, "comparison": 4,
                "title_only": 5, "chart": 5, "picture": 8}  # fmt: skip
CHART_TYPES = {"bar": XL_CHART_TYPE.COLUMN_CLUSTERED, "line": XL_CHART_TYPE.LINE_MARKERS,
               "pie": XL_CHART_TYPE.PIE}  # fmt: skip


def layout_of(s: Slide, n: int) -> str:
    return s.layout or ("title" if n == 0 else "content")


def add_slide(prs, s: Slide, n: int) -> None:
    layout = layout_of(s, n)
    if layout == "chart" and s.bullets:
        layout = "two_content"  # bullets on the left, the chart on the right
    slide = prs.slides.add_slide(prs.slide_layouts[LAYOUT_INDEX[layout]])
    slide.shapes.title.text = s.title
    ph = {p.placeholder_format.idx: p for p in slide.placeholders}
    if layout in ("title", "section", "content"):
        _lines(ph[1], s.bullets)
    elif layout == "two_content":
        _lines(ph[1], s.bullets)
        if s.chart is not None:
            _chart_in(slide, ph[2], s.chart)
        else:
            _lines(ph[2], s.right_bullets)
    elif layout == "comparison":
        _lines(ph[1], [s.left_heading])
        _lines(ph[2], s.bullets)
        _lines(ph[3], [s.right_heading])
        _lines(ph[4], s.right_bullets)
    elif layout == "picture":
        assert s.image is not None  # the model requires it
        ph[1].insert_picture(io.BytesIO(slide_image_bytes(s.image)))
        _lines(ph[2], [s.image.caption or s.image.subject, *s.bullets])
    elif s.chart is not None:  # title only, or a chart slide without bullets
        top = Inches(1.5)
        _add_chart(slide, s.chart, Inches(0.75), top, prs.slide_width - Inches(1.5),
                   prs.slide_height - top - Inches(0.5))  # fmt: skip
    if s.notes:
        slide.notes_slide.notes_text_frame.text = s.notes


def _lines(placeholder, lines: list[str]) -> None:
    lines = lines or [""]
    tf = placeholder.text_frame
    tf.text = lines[0]
    for line in lines[1:]:
        tf.add_paragraph().text = line


def _chart_in(slide, placeholder, chart: Chart) -> None:
    """A chart where a content placeholder sits: same box, the placeholder removed (an
    empty one would show 'Click to add text' in Impress)."""
    left, top, width, height = placeholder.left, placeholder.top, placeholder.width, placeholder.height
    placeholder._element.getparent().remove(placeholder._element)
    _add_chart(slide, chart, left, top, width, height)


def _add_chart(slide, chart: Chart, left, top, width, height) -> None:
    data = CategoryChartData()
    data.categories = chart.categories
    for series in chart.series:
        data.add_series(series.name, series.values)
    c = slide.shapes.add_chart(CHART_TYPES[chart.kind], left, top, width, height, data).chart
    c.has_legend = chart.kind == "pie" or len(chart.series) > 1
    if c.has_legend:
        c.legend.position = XL_LEGEND_POSITION.BOTTOM
        c.legend.include_in_layout = False
    plot = c.plots[0]
    plot.has_data_labels = True
    plot.data_labels.number_format = chart.number_format
    plot.data_labels.number_format_is_linked = False
