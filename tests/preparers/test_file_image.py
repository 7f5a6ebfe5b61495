"""The png format: invoices, receipts and itineraries rendered from their PDF with pdftoppm,
byte for byte the same on every run, and read back with tesseract so the file gate can check
that the total is legible. Real poppler, real tesseract, real template worlds in several
locales (decimal commas, symbols after the amount, zł, kr, ₹)."""

from __future__ import annotations

import io
import struct
import zlib

import pytest
from PIL import Image
from reportlab.pdfgen import canvas

from guiforge.gates.file_gate import check_files
from guiforge.preparers.file_image import (
    PNG_SIGNATURE,
    ImageReadError,
    pdf_to_png,
    png_chunks,
    strip_volatile_chunks,
)
from guiforge.preparers.files import (
    FileFormatError,
    FileReadError,
    build_workspace,
    read_file_text,
    render_document,
)
from guiforge.worlds.formats import find_number

# (scenario, document): an invoice and a receipt in de_AT, a quote in sv_SE (kr after the
# amount), an invoice in pl_PL (space-grouped thousands, zł) and one in en_IN (₹)
DOCUMENTS = [
    ("expense_report", "inv_hotel"),
    ("expense_report", "rcpt_taxi_1"),
    ("renovation_quotes", "quote_2"),
    ("freelance_invoicing", "invoice_2"),
    ("conference_trip", "reg_invoice"),
]


@pytest.fixture(scope="module")
def scans(worlds) -> dict[tuple[str, str], tuple[bytes, str]]:
    """(scenario, document) -> (png bytes, OCR text): each rendered and read once."""
    out = {}
    for scenario, doc_id in DOCUMENTS:
        name, data = render_document(worlds[scenario], doc_id, "png")
        assert name.endswith(".png")
        out[(scenario, doc_id)] = (data, read_file_text(name, data))
    return out


@pytest.mark.parametrize(("scenario", "doc_id"), DOCUMENTS)
def test_ocr_reads_the_total(worlds, scans, scenario, doc_id):
    doc = worlds[scenario].document(doc_id)
    data, text = scans[(scenario, doc_id)]
    assert find_number(text, doc.total), f"{scenario}/{doc_id}: no {doc.total} in OCR:\n{text}"
    # the line items' descriptions come through as words, not only the numbers
    assert doc.line_items[0].description.split()[0].lower() in text.lower()
    with Image.open(io.BytesIO(data)) as img:
        assert img.format == "PNG" and img.size == (910, 1287)  # A4 at 110 dpi


def test_an_itinerary_renders_and_its_booking_reference_is_legible(worlds):
    world = worlds["conference_trip"]
    name, data = render_document(world, "itinerary", "png")
    ref = world.fact("booking_ref").value
    assert ref in read_file_text(name, data)


def test_the_same_document_gives_the_same_bytes(worlds, scans):
    data, _ = scans[("expense_report", "inv_hotel")]
    _, again = render_document(worlds["expense_report"], "inv_hotel", "png")
    assert again == data
    kinds = [kind for kind, _ in png_chunks(data)]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND"
    assert not {b"tIME", b"tEXt", b"zTXt", b"iTXt"} & set(kinds)
    # another document is another picture
    assert scans[("expense_report", "rcpt_taxi_1")][0] != data


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I4s", len(body), kind) + body + struct.pack(">I", zlib.crc32(kind + body))


def test_png_chunks_reports_damage_directly():
    with pytest.raises(ImageReadError, match="no IEND"):
        png_chunks(PNG_SIGNATURE + _chunk(b"IHDR", bytes(13)))


def test_time_and_text_chunks_are_stripped(scans):
    data, _ = scans[("expense_report", "rcpt_taxi_1")]
    ihdr_end = len(PNG_SIGNATURE) + 12 + 13  # signature, then the 13-byte IHDR chunk
    stamped = (data[:ihdr_end] + _chunk(b"tIME", bytes([7, 233, 11, 29, 9, 59, 1]))
               + _chunk(b"tEXt", b"Software\x00pdftoppm") + data[ihdr_end:])
    assert stamped != data
    assert strip_volatile_chunks(stamped) == data


def test_workspace_png_entry_and_the_file_gate(worlds):
    world = worlds["freelance_invoicing"]
    ws = build_workspace(world, {"documents": [{"document": "invoice_1", "format": "png",
                                                "name": "scan.png"}]})
    assert ws.manifest["scan.png"].format == "png"
    own, other = world.fact("invoice_a_total"), world.fact("invoice_c_total")
    facts = [("scan.png", own), ("scan.png", other)]
    problems = check_files(ws.files, facts, required=["scan.png"])
    # the gate reads the image: its own total is legible, another invoice's total is not there
    assert problems == [f"scan.png: does not state fact invoice_c_total = {other.value!r} (money)"]


def test_only_invoices_receipts_and_itineraries_become_images(worlds):
    world = worlds["expense_report"]
    with pytest.raises(FileFormatError, match="cannot be written as png"):
        render_document(world, "exp_claim", "png")


def test_a_multi_page_pdf_is_refused():
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, invariant=True)
    for page in ("one", "two"):
        pdf.drawString(72, 720, f"page {page}")
        pdf.showPage()
    pdf.save()
    with pytest.raises(FileFormatError, match="2 pages long"):
        pdf_to_png(buf.getvalue(), what="test.pdf")


@pytest.mark.parametrize(("damage", "reason"), [
    (lambda d: d[: len(d) // 2], "truncated PNG"),
    (lambda d: d[:200] + bytes([d[200] ^ 0xFF]) + d[201:], "fails its CRC"),
    (lambda d: b"GIF89a" + d[6:], "not a PNG"),
])
def test_a_corrupt_png_is_a_one_line_error(scans, damage, reason):
    data, _ = scans[("expense_report", "rcpt_taxi_1")]
    with pytest.raises(FileReadError) as err:
        read_file_text("receipt.png", damage(data))
    message = str(err.value)
    assert message.startswith("receipt.png: ") and reason in message and "\n" not in message


def test_pixels_that_do_not_decode_are_an_error():
    """Every chunk intact (CRCs recomputed) but the compressed pixel data is cut short."""
    img = Image.new("RGB", (64, 64), "white")
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    chunks = png_chunks(buf.getvalue())
    broken = PNG_SIGNATURE + b"".join(
        _chunk(kind, body[: len(body) // 3] if kind == b"IDAT" else body) for kind, body in chunks
    )
    with pytest.raises(FileReadError, match=r"^blank\.png: the pixels do not decode"):
        read_file_text("blank.png", broken)
