"""A text document's sections in a .docx: Word's Heading 1-3 styles, body paragraphs, bullet
lists, real tables (a built-in table style, a bold header row that repeats on every page)
and note/warning callouts as shaded, bordered paragraphs; a page header naming the document
and its author, so the file looks like one an office wrote."""

from __future__ import annotations

from docx.enum.table import WD_TABLE_ALIGNMENT
from docx.oxml import OxmlElement
from docx.oxml.ns import qn

from guiforge.preparers.file_common import issuer
from guiforge.worlds.model import DocTable, Document, Section, World

TABLE_STYLE = "LightGrid-Accent1"  # in python-docx's default template; LibreOffice renders it
CALLOUT = {"note": ("DEEAF6", "2E75B6", "Note"), "warning": ("FFF2CC", "BF8F00", "Important")}


def write_sections(d, world: World, doc: Document) -> None:
    _page_header(d, world, doc)
    for s in doc.sections:
        _paragraph(d, s.heading, f"Heading{s.level}")
        if s.style in CALLOUT:
            for text in s.paragraphs:
                _callout(d, text, s.style)
        else:
            for text in s.paragraphs:
                d.add_paragraph(text)
        for b in s.bullets:
            _paragraph(d, b, "ListBullet")
        if s.table is not None:
            _table(d, s, s.table)


def _paragraph(d, text: str, style_id: str):
    p = d.add_paragraph(text)
    p._p.style = style_id  # by id: python-docx's look-up by name scans styles.xml each time
    return p


def _page_header(d, world: World, doc: Document) -> None:
    header = d.sections[0].header
    p = header.paragraphs[0]
    p.text = f"{doc.title} \u2014 {issuer(world, doc).name}"
    p._p.style = "Header"


def _table(d, section: Section, t: DocTable) -> None:
    if t.caption:
        _paragraph(d, t.caption, "Caption")
    table = d.add_table(rows=1, cols=len(t.columns))
    table._tbl.tblStyle_val = TABLE_STYLE
    table.alignment = WD_TABLE_ALIGNMENT.CENTER
    look = table._tbl.tblPr.find(qn("w:tblLook"))
    if look is not None:  # the style's header-row look only, not a bold first column
        look.set(qn("w:firstColumn"), "0")
        look.set(qn("w:val"), "0420")
    head = table.rows[0]
    trPr = head._tr.get_or_add_trPr()
    repeat = OxmlElement("w:tblHeader")  # the header row repeats when the table breaks a page
    repeat.set(qn("w:val"), "true")
    trPr.append(repeat)
    for c, name in zip(head.cells, t.columns, strict=True):
        c.text = ""
        c.paragraphs[0].add_run(name).bold = True
    for row in t.rows:
        for c, v in zip(table.add_row().cells, row, strict=True):
            c.text = v
    d.add_paragraph()  # Word runs a following heading into the table without one


def _callout(d, text: str, style: str) -> None:
    fill, line, label = CALLOUT[style]
    p = d.add_paragraph()
    p.add_run(f"{label}: ").bold = True
    p.add_run(text)
    pPr = p._p.get_or_add_pPr()
    borders = OxmlElement("w:pBdr")
    for side in ("top", "left", "bottom", "right"):
        b = OxmlElement(f"w:{side}")
        b.set(qn("w:val"), "single")
        b.set(qn("w:sz"), "12" if side == "left" else "4")
        b.set(qn("w:space"), "4")
        b.set(qn("w:color"), line)
        borders.append(b)
    shading = OxmlElement("w:shd")
    shading.set(qn("w:val"), "clear")
    shading.set(qn("w:color"), "auto")
    shading.set(qn("w:fill"), fill)
    # schema order inside pPr: pStyle, ..., pBdr, shd, ..., spacing, ind, jc
    pPr.insert(0, shading)
    pPr.insert(0, borders)
