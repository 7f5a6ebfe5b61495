"""Structured documents (issue 16): a text document's sections reach docx (Heading styles, a
real table with a bold header row, bullets, a callout), pdf, md and txt so that python-docx,
pdftotext and the text tools read headings and table cells back; decks use the template's
real layouts with native charts and generated pictures, open in python-pptx and convert in
real LibreOffice; the scenarios' documents have that structure, seeded from the world."""

from __future__ import annotations

import io
import shutil

import pytest
from docx import Document as open_docx
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE

from guiforge.envs.base import FinalState
from guiforge.envs.tools.context import ToolContext
from guiforge.envs.tools.text import document_text as tool_text
from guiforge.preparers.file_docx import document_docx
from guiforge.preparers.file_pdf import document_pdf
from guiforge.preparers.file_plain import document_text
from guiforge.preparers.file_pptx import document_pptx
from guiforge.preparers.file_read import read_file_text
from guiforge.preparers.file_xlsx import run_soffice
from guiforge.preparers.slide_images import slide_image_bytes
from guiforge.verify.checks import docx_contains, pptx_contains
from guiforge.verify.office_checks import docx_table_cell_equals, pptx_chart_values
from guiforge.worlds.model import (
    Chart,
    ChartSeries,
    DocTable,
    Document,
    Section,
    Slide,
    SlideImage,
    World,
)
from guiforge.worlds.realism import document_summary

REPORT = Document(
    document_id="trip_report", kind="text", title="Trip report: Porto", filename="trip_report.docx",
    paragraphs=["Two days with the client in Porto."],
    sections=[
        Section(heading="Summary", paragraphs=["The workshop went well."], bullets=["Signed the pilot", "Follow-up in May"]),
        Section(heading="Costs", level=2, table=DocTable(columns=["Item", "Amount"], rows=[["Hotel Ribeira", "412.50"], ["Taxis", "61.20"]], caption="Receipts attached")),
        Section(heading="Next steps", style="note", paragraphs=["Send the proposal by 2024-05-10."]),
    ],
)  # fmt: skip
LAYOUTS = ["title", "section", "content", "two_content", "comparison", "chart", "picture", "title_only"]


def _deck() -> Document:
    bar = Chart(kind="bar", categories=["Q1", "Q2", "Q3"], series=[ChartSeries(name="Visits", values=[120, 135.5, 160])])
    pie = Chart(kind="pie", categories=["Adults", "Children"], series=[ChartSeries(name="Guests", values=[31, 7])])
    return Document(document_id="deck", kind="slides", title="Pilot review", filename="pilot.pptx", slides=[
        Slide(title="Pilot review", layout="title", bullets=["Ana Costa", "May 2024"]),
        Slide(title="Part one", layout="section", bullets=["Where we are"]),
        Slide(title="Goals", layout="content", bullets=["Faster onboarding", "Fewer tickets"]),
        Slide(title="Two sides", layout="two_content", bullets=["Left point"], right_bullets=["Right point"]),
        Slide(title="Options", layout="comparison", left_heading="Option A", right_heading="Option B",
              bullets=["Cheaper"], right_bullets=["Faster"]),
        Slide(title="Visits per quarter", layout="chart", chart=bar),
        Slide(title="Who came", layout="chart", bullets=["38 guests"], chart=pie),
        Slide(title="Porto office", layout="picture",
              image=SlideImage(kind="photo", subject="Porto", caption="Our office by the river")),
        Slide(title="Questions", layout="title_only", notes="Thank the team"),
    ])  # fmt: skip


def _with(world: World, *docs: Document) -> World:
    return world.model_copy(update={"documents": [*world.documents, *docs]})


@pytest.fixture(scope="module")
def world(worlds) -> World:
    return _with(worlds["expense_report"], REPORT, _deck())


def test_docx_sections_use_word_styles_and_real_tables(world, tmp_path):
    data = document_docx(world, REPORT)
    d = open_docx(io.BytesIO(data))
    styles = {p.text: p.style.name for p in d.paragraphs}
    assert styles["Summary"] == "Heading 1" and styles["Costs"] == "Heading 2"
    assert styles["Signed the pilot"] == "List Bullet"
    table = d.tables[0]
    assert table.style.name == "Light Grid Accent 1"
    assert [c.text for c in table.rows[1].cells] == ["Hotel Ribeira", "412.50"]
    assert all(r.bold for c in table.rows[0].cells for r in c.paragraphs[0].runs if r.text)
    assert "Trip report: Porto" in d.sections[0].header.paragraphs[0].text
    text = read_file_text("r.docx", data)
    assert "Hotel Ribeira\t412.50" in text and "Note: Send the proposal" in text
    assert document_docx(world, REPORT) == data  # same world, same bytes

    (tmp_path / "trip_report.docx").write_bytes(data)
    state = FinalState(workspace=tmp_path)
    assert docx_contains(state, "trip_report.docx", ["412.50", "Follow-up in May"])
    assert docx_table_cell_equals(state, "trip_report.docx", "Costs", "Taxis", "Amount", 61.2, kind="number")
    assert not docx_table_cell_equals(state, "trip_report.docx", "Costs", "Taxis", "Amount", 62, kind="number")
    assert not docx_table_cell_equals(state, "trip_report.docx", "Summary", "Taxis", "Amount", 61.2)
    tool = tool_text(ToolContext(workspace=tmp_path), "trip_report.docx")
    assert "Costs" in tool and "Taxis\t61.20" in tool


def test_pdf_md_and_txt_keep_headings_and_table_cells(world):
    pdf = read_file_text("r.pdf", document_pdf(world, REPORT))
    for text in ("Summary", "Costs", "Hotel Ribeira", "412.50", "Signed the pilot", "Note: Send the proposal"):
        assert text in pdf, text
    md = document_text(world, REPORT).decode()
    assert "## Summary" in md and "### Costs" in md and "| Hotel Ribeira | 412.50 |" in md
    assert "> **Note:** Send the proposal" in md and "- Signed the pilot" in md
    txt = document_text(world, REPORT, markdown=False).decode()
    assert "Summary\n-------" in txt and "Hotel Ribeira  412.50" in txt


def test_deck_layouts_charts_and_pictures(world, tmp_path):
    deck = _deck()
    data = document_pptx(world, deck)
    assert document_pptx(world, deck) == data
    prs = Presentation(io.BytesIO(data))
    slides = list(prs.slides)
    assert [s.slide_layout.name for s in slides] == [
        "Title Slide", "Section Header", "Title and Content", "Two Content", "Comparison",
        "Title Only", "Two Content", "Picture with Caption", "Title Only"]  # fmt: skip
    charts = [sh.chart for s in slides for sh in s.shapes if sh.has_chart]
    assert [list(c.plots[0].categories) for c in charts] == [["Q1", "Q2", "Q3"], ["Adults", "Children"]]
    assert list(charts[0].series[0].values) == [120, 135.5, 160]
    pictures = [sh for sh in slides[7].shapes if sh.shape_type == MSO_SHAPE_TYPE.PLACEHOLDER
                and sh.placeholder_format.type == 18]  # fmt: skip
    assert pictures and pictures[0].image.content_type == "image/jpeg"  # a photo
    text = read_file_text("d.pptx", data)
    assert "Chart Visits: Q1 120; Q2 135.5; Q3 160" in text and "Option B" in text
    (tmp_path / "pilot.pptx").write_bytes(data)
    state = FinalState(workspace=tmp_path)
    assert pptx_contains(state, "pilot.pptx", "Right point", slide=3)
    assert pptx_chart_values(state, "pilot.pptx", 5, ["Q1", "Q2", "Q3"], [120, 135.5, 160])
    assert not pptx_chart_values(state, "pilot.pptx", 5, ["Q1", "Q2", "Q3"], [120, 135, 160])
    assert not pptx_chart_values(state, "pilot.pptx", 2, ["Q1", "Q2", "Q3"], [120, 135.5, 160])  # no chart


def test_slide_pictures_are_deterministic_and_differ_by_subject():
    a = SlideImage(kind="map", subject="Hotel Ribeira")
    assert slide_image_bytes(a) == slide_image_bytes(a)
    assert slide_image_bytes(a) != slide_image_bytes(SlideImage(kind="map", subject="Hotel Douro"))
    assert slide_image_bytes(SlideImage(kind="photo", subject="Porto")).startswith(b"\xff\xd8")  # JPEG
    for kind in ("logo", "map"):
        assert slide_image_bytes(SlideImage(kind=kind, subject="Porto")).startswith(b"\x89PNG")


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice not installed")
def test_libreoffice_converts_the_structured_files(world, tmp_path):
    (tmp_path / "pilot.pptx").write_bytes(document_pptx(world, _deck()))
    (tmp_path / "trip_report.docx").write_bytes(document_docx(world, REPORT))
    run_soffice(["--convert-to", "pdf", "--outdir", str(tmp_path / "out"),
                 str(tmp_path / "pilot.pptx"), str(tmp_path / "trip_report.docx")],
                tmp_path / "profile", 180)  # fmt: skip
    deck_pdf = read_file_text("pilot.pdf", (tmp_path / "out" / "pilot.pdf").read_bytes())
    assert deck_pdf.count("\f") >= len(LAYOUTS)  # one page per slide
    for text in ("Option A", "Visits per quarter", "Our office by the river"):
        assert text in deck_pdf, text
    report_pdf = read_file_text("r.pdf", (tmp_path / "out" / "trip_report.pdf").read_bytes())
    assert "Hotel Ribeira" in report_pdf and "412.50" in report_pdf


def test_scenario_documents_have_structure_seeded_from_the_world(worlds):
    moving = worlds["moving_house"]
    checklist = moving.document("checklist")
    assert 3 <= len(checklist.sections) <= 6 and 20 <= len(checklist.text_lines()) <= 60
    table = checklist.section("Packing plan").table
    assert table is not None  # the same boxes the packing list and the facts count
    assert sum(int(r[1]) for r in table.rows) == moving.fact("box_count").value
    assert max(table.rows, key=lambda r: int(r[1]))[0] == moving.fact("most_boxes_room").value
    summary = document_summary(worlds.values())
    assert summary["sections_per_text_document"] >= 3 and summary["slides_per_deck"] >= 6
    assert {"title", "chart", "picture", "two_content"} <= set(summary["layouts_used"])
    reno = worlds["renovation_quotes"]
    chart = next(s.chart for s in reno.document("moodboard").slides if s.chart)
    assert chart.series[0].values == [reno.document(f"quote_{i}").total for i in (1, 2, 3)]


def test_a_fact_can_come_from_a_section_table(worlds):
    from guiforge.worlds.sources import resolve

    w = worlds["team_offsite"]
    minutes = w.document("planning_minutes")
    due = next(r[2] for r in minutes.section("Action items").table.rows if r[0] == "Pay the deposit")
    assert w.fact("deposit_due").value == due
    src = "doc:planning_minutes.table:Venues compared.find:Venue={}->Minutes from the office"
    venue = minutes.section("Venues compared").table.rows[0][0]
    assert isinstance(resolve(w, src.format(venue)), int)
