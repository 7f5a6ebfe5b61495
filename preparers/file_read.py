"""Read any workspace file back as text, each format through its own library: openpyxl for
cell values (cached formula values), python-pptx for slide text, tables, charts and notes,
python-docx for paragraphs and tables in body order, pdftotext for PDFs, tesseract OCR for
PNG images (see ``file_image``), the ODF content.xml
for files LibreOffice saved in its own formats, UTF-8 for plain text. A file that does not
open (corrupt, truncated, wrong format) raises ``FileReadError`` with a one-line reason."""

from __future__ import annotations

import base64
import csv
import io
import re
import subprocess
import tempfile
import zipfile
import zlib
from datetime import date, datetime, time
from pathlib import Path, PurePosixPath
from xml.etree import ElementTree

from guiforge.preparers.file_common import plain_number

TEXT_SUFFIXES = {
    ".md",
    ".txt",
    ".py",
    ".sh",
    ".json",
    ".yaml",
    ".yml",
    ".html",
    ".xml",
    ".ini",
    ".cfg",
    ".toml",
    ".log",
    ".sql",
    ".js",
}
ODF_SUFFIXES = {".odt", ".ods", ".odp"}
PDF_TIMEOUT_S = 30


class FileReadError(ValueError):
    """The file does not open with its format's library."""


def read_file_text(name: str, data: bytes) -> str:
    suffix = PurePosixPath(name).suffix.lower()
    readers = {".xlsx": _xlsx, ".xlsm": _xlsx, ".pptx": _pptx, ".docx": _docx, ".pdf": _pdf,
               ".png": _png}
    reader = readers.get(suffix)
    if reader is None and suffix in ODF_SUFFIXES:
        reader = _odf
    if reader is None and suffix in (".csv", ".tsv"):
        reader = _csv_text
    if reader is None and suffix in TEXT_SUFFIXES:
        reader = _plain
    if reader is None:
        raise FileReadError(f"{name}: no reader for {suffix or 'files without an extension'}")
    if not data:
        raise FileReadError(f"{name}: the file is empty")
    try:
        return reader(data)
    except FileReadError as e:
        raise FileReadError(f"{name}: {e}") from None
    except Exception as e:  # each library raises its own types for a damaged file
        raise FileReadError(
            f"{name}: does not open as {suffix[1:]}: {type(e).__name__}: "
            f"{str(e).splitlines()[0] if str(e) else ''}"
        ) from None


def value_text(v: object) -> str:
    """A cell value as text: numbers without float dust, dates ISO, times HH:MM."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v).upper()
    if isinstance(v, int | float):
        return plain_number(v)
    if isinstance(v, datetime):
        return (
            v.date().isoformat()
            if v.time() == time(0)
            else v.isoformat(sep=" ", timespec="minutes")
        )
    if isinstance(v, date):
        return v.isoformat()
    if isinstance(v, time):
        return v.strftime("%H:%M")
    return str(v)


def _check_zip(data: bytes) -> None:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        bad = z.testzip()  # reads every member: a damaged entry fails its CRC here
        if bad is not None:
            raise FileReadError(f"member {bad} is damaged (CRC mismatch)")


# a formula cell whose cached value is missing: <f>..</f> then <v/>, <v></v> or no <v>
_UNCACHED = re.compile(rb"</f>(?:<v\s*/>|<v></v>|</c>)")


def _xlsx(data: bytes) -> str:
    # heavy: PIL, lxml, numpy, openpyxl, imported when this runs
    from openpyxl import load_workbook

    _check_zip(data)
    wb = load_workbook(io.BytesIO(data), data_only=True)
    formulas = None
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        sheets = [n for n in z.namelist() if n.startswith("xl/worksheets/")]
        if any(_UNCACHED.search(z.read(n)) for n in sheets):
            formulas = load_workbook(io.BytesIO(data), data_only=False)
    out: list[str] = []
    for ws in wb.worksheets:
        out.append(f"## {ws.title}")
        for row in ws.iter_rows():
            cells = []
            for c in row:
                v = c.value
                if v is None and formulas is not None:
                    f = formulas[ws.title][c.coordinate].value
                    v = f if isinstance(f, str) and f.startswith("=") else None  # shown as is
                cells.append(value_text(v))
            while cells and not cells[-1]:
                cells.pop()
            if cells:
                out.append("\t".join(cells))
    return "\n".join(out) + "\n"


def _pptx(data: bytes) -> str:
    # heavy: PIL, lxml, pptx, imported when this runs
    from pptx import Presentation

    _check_zip(data)
    prs = Presentation(io.BytesIO(data))
    out: list[str] = []
    for n, slide in enumerate(prs.slides, start=1):
        out.append(f"## Slide {n}")
        for shape in slide.shapes:
            out += _shape_text(shape)
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                out.append(f"Notes: {notes.text}")
    return "\n".join(out) + "\n"


def _shape_text(shape) -> list[str]:
    out: list[str] = []
    if shape.has_text_frame and shape.text_frame.text.strip():
        out.append(shape.text_frame.text)
    if getattr(shape, "has_table", False) and shape.has_table:
        for row in shape.table.rows:
            out.append("\t".join(c.text for c in row.cells))
    if getattr(shape, "has_chart", False) and shape.has_chart:
        chart = shape.chart
        cats = [str(c) for c in chart.plots[0].categories] if chart.plots else []
        for series in chart.series:
            vals = [value_text(v) for v in series.values]
            out.append(
                f"Chart {series.name}: "
                + "; ".join(f"{c} {v}" for c, v in zip(cats, vals, strict=False))
            )
    if shape.shape_type is not None and getattr(shape, "shapes", None) is not None:
        for sub in shape.shapes:  # a group
            out += _shape_text(sub)
    return out


def _docx(data: bytes) -> str:
    # heavy: docx, lxml, imported when this runs
    from docx import Document
    from docx.table import Table

    _check_zip(data)
    doc = Document(io.BytesIO(data))
    out: list[str] = []

    def walk(container) -> None:
        for block in container.iter_inner_content():
            if isinstance(block, Table):
                for row in block.rows:
                    out.append("\t".join(c.text for c in row.cells))
            elif block.text.strip():
                out.append(block.text)

    for section in doc.sections:
        walk(section.header)
    walk(doc)
    for section in doc.sections:
        walk(section.footer)
    return "\n".join(out) + "\n"


def _pdf(data: bytes) -> str:
    if not data.startswith(b"%PDF-"):
        raise FileReadError("not a PDF (no %PDF- header)")
    if b"%%EOF" not in data[-1024:]:
        raise FileReadError("truncated PDF (no %%EOF marker at the end)")
    _check_pdf_streams(data)
    with tempfile.NamedTemporaryFile(suffix=".pdf") as f:
        f.write(data)
        f.flush()
        proc = subprocess.run(
            ["pdftotext", "-layout", "-enc", "UTF-8", f.name, "-"],
            capture_output=True,
            timeout=PDF_TIMEOUT_S,
        )
    err = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode != 0 or "Error" in err:
        raise FileReadError(f"pdftotext failed: {err.splitlines()[0] if err else proc.returncode}")
    return proc.stdout.decode("utf-8")


def _png(data: bytes) -> str:
    from guiforge.preparers.file_image import png_text  # it imports this module

    return png_text(data)


# an object's dictionary up to its stream keyword (nested << >> one level deep is enough for
# stream dictionaries: /DecodeParms << ... >>)
_STREAM = re.compile(rb"(\d+) \d+ obj\s*<<((?:[^<>]|<<[^<>]*>>|<[^<>]*>)*)>>\s*stream\r?\n")
_LENGTH = re.compile(rb"/Length\s+(\d+)(\s+\d+\s+R)?")


def _filters(head: bytes) -> list[bytes]:
    """The decode filters of a stream dictionary, in order: /Filter /X or /Filter [/X /Y]."""
    if b"/Filter" not in head:
        return []
    rest = head.split(b"/Filter", 1)[1].lstrip()
    if rest.startswith(b"["):
        return re.findall(rb"/(\w+)", rest[1 : rest.find(b"]")])
    return re.findall(rb"^/(\w+)", rest)


def _check_pdf_streams(data: bytes) -> None:
    """pdftotext skips what it cannot decode and still succeeds, so inflate every Flate
    stream here: a damaged one fails its zlib checksum."""
    for m in _STREAM.finditer(data):
        head = m.group(2)
        filters = _filters(head)
        if b"FlateDecode" not in filters or not set(filters) <= {b"FlateDecode", b"ASCII85Decode"}:
            continue
        length = _LENGTH.search(head)
        start = m.end()
        if length and not length.group(2):
            body = data[start : start + int(length.group(1))]
        else:  # an indirect /Length: the stream runs to its endstream keyword
            body = data[start : data.find(b"endstream", start)]
        try:
            for f in filters:
                if f == b"ASCII85Decode":
                    body = base64.a85decode(
                        body.strip().removesuffix(b"~>"), ignorechars=b" \t\r\n"
                    )
                else:
                    body = zlib.decompressobj().decompress(body)
        except (zlib.error, ValueError) as e:
            raise FileReadError(
                f"stream of object {m.group(1).decode()} is damaged ({e})"
            ) from None


_TEXT_NS = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_TABLE_NS = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"


def _odf(data: bytes) -> str:
    _check_zip(data)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        root = ElementTree.fromstring(z.read("content.xml"))
    # ElementTree has no parent links: collect what sits inside table cells up front
    in_cells = {id(e) for cell in root.iter(f"{{{_TABLE_NS}}}table-cell") for e in cell.iter()}
    out: list[str] = []
    for el in root.iter():
        if el.tag == f"{{{_TABLE_NS}}}table-row":
            cells = [text for c in el if c.tag.endswith("table-cell") for text in _cells(c)]
            while cells and not cells[-1]:
                cells.pop()
            if cells:
                out.append("\t".join(cells))
        elif el.tag in (f"{{{_TEXT_NS}}}p", f"{{{_TEXT_NS}}}h") and id(el) not in in_cells:
            text = "".join(el.itertext())
            if text.strip():
                out.append(text)
    return "\n".join(out) + "\n"


def _csv_text(data: bytes) -> str:
    """Cells joined by tabs, one row a line: '..,1089.98' reads as a number only once the
    comma before it is a separator and not part of the number."""
    text = _plain(data)
    dialect = "excel-tab" if "\t" in text.split("\n", 1)[0] else "excel"
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), dialect, strict=True))
    except csv.Error as e:
        raise FileReadError(f"does not parse as CSV: {e}") from None
    return "\n".join("\t".join(r) for r in rows) + "\n"


def _cells(cell: ElementTree.Element) -> list[str]:
    """A cell's text as many times as it repeats (Calc stores equal neighbours once, and a
    row's trailing blanks as one cell repeated a thousand times: those are capped)."""
    text = "".join(cell.itertext())
    n = int(cell.get(f"{{{_TABLE_NS}}}number-columns-repeated", "1"))
    return [text] * min(n, 64)


def _plain(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise FileReadError(f"not UTF-8 text (byte {e.start})") from None


def read_path_text(path: str | Path) -> str:
    p = Path(path)
    return read_file_text(p.name, p.read_bytes())
