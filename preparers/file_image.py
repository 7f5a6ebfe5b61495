"""World documents as .png images (a scan or photo of an invoice, a receipt, an itinerary),
and images read back as text with OCR.

A document's image is its PDF (``file_pdf``) rendered by poppler's ``pdftoppm`` at 110 dpi:
an A4 page becomes 910x1287 pixels, small enough for a model's context and large enough for
tesseract to read every amount. Only one-page documents are rendered, so nothing the task
relies on is cut off. This is the clean look; ``file_scan`` turns a page into a scan or a
phone photo.

Bytes are deterministic: the PDF is, pdftoppm draws it the same way every time, and any
chunk that could carry a time stamp or a tool's comment (tIME, tEXt, zTXt, iTXt) is dropped.
"""

from __future__ import annotations

import io
import os
import re
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

from PIL import Image

from guiforge.preparers.file_common import FileFormatError
from guiforge.preparers.file_pdf import document_pdf
from guiforge.preparers.file_read import FileReadError
from guiforge.worlds.model import Document, World

DPI = 110
RENDER_TIMEOUT_S = 30
OCR_TIMEOUT_S = 30
# tesseract's OpenMP threads fight over a busy machine's cores: one thread reads the same text
# about 3x faster in wall time here (2.7 s -> 0.9 s a page on 2 shared cores)
OCR_THREADS = {"OMP_THREAD_LIMIT": "1"}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# ancillary chunks that may hold a creation time or a tool's name: not part of the picture
VOLATILE_CHUNKS = {b"tIME", b"tEXt", b"zTXt", b"iTXt"}
_PAGES = re.compile(r"^Pages:\s+(\d+)$", re.MULTILINE)


class ImageReadError(FileReadError):
    """The bytes are not a readable PNG, or OCR failed on them."""


def document_png(world: World, doc: Document) -> bytes:
    """The document's one-page PDF rendered to a PNG."""
    return pdf_to_png(document_pdf(world, doc), what=f"document {doc.document_id}")


def pdf_to_png(pdf: bytes, dpi: int = DPI, what: str = "the PDF") -> bytes:
    with tempfile.TemporaryDirectory(prefix="guiforge-png-") as tmp:
        src = Path(tmp) / "page.pdf"
        src.write_bytes(pdf)
        pages = _page_count(src, what)
        if pages != 1:
            raise FileFormatError(
                f"{what} is {pages} pages long; only one-page documents become png "
                "(use pdf for longer ones)"
            )
        _run(["pdftoppm", "-r", str(dpi), "-png", "-singlefile", str(src), str(Path(tmp) / "page")],
             what, RENDER_TIMEOUT_S)
        return strip_volatile_chunks((Path(tmp) / "page.png").read_bytes())


def _page_count(pdf: Path, what: str) -> int:
    out = _run(["pdfinfo", str(pdf)], what, RENDER_TIMEOUT_S)
    m = _PAGES.search(out.decode("utf-8", "replace"))
    if m is None:
        raise FileFormatError(f"{what}: pdfinfo reports no page count")
    return int(m.group(1))


def _run(cmd: list[str], what: str, timeout: float) -> bytes:
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise FileFormatError(
            f"{cmd[0]} is not installed; apt-get install poppler-utils to render png"
        ) from None
    except subprocess.TimeoutExpired:
        raise FileFormatError(f"{cmd[0]} took over {timeout:.0f}s on {what}") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines() or [str(proc.returncode)]
        raise FileFormatError(f"{cmd[0]} failed on {what}: {err[-1]}")
    return proc.stdout


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, body) of every chunk, each CRC checked; raises ImageReadError on damage."""
    if not data.startswith(PNG_SIGNATURE):
        raise ImageReadError("not a PNG (no PNG signature)")
    chunks: list[tuple[bytes, bytes]] = []
    i = len(PNG_SIGNATURE)
    while i < len(data):
        if i + 12 > len(data):
            raise ImageReadError(f"truncated PNG (a chunk header is cut off at byte {i})")
        length, kind = struct.unpack(">I4s", data[i : i + 8])
        end = i + 8 + length
        if end + 4 > len(data):
            raise ImageReadError(f"truncated PNG ({kind.decode('latin-1')} chunk cut off)")
        body = data[i + 8 : end]
        (crc,) = struct.unpack(">I", data[end : end + 4])
        if zlib.crc32(kind + body) != crc:
            raise ImageReadError(f"damaged PNG ({kind.decode('latin-1')} chunk fails its CRC)")
        chunks.append((kind, body))
        i = end + 4
        if kind == b"IEND":
            break
    if not chunks or chunks[-1][0] != b"IEND":
        raise ImageReadError("truncated PNG (no IEND chunk)")
    return chunks


def strip_volatile_chunks(data: bytes) -> bytes:
    out = [PNG_SIGNATURE]
    for kind, body in png_chunks(data):
        if kind in VOLATILE_CHUNKS:
            continue
        out.append(struct.pack(">I4s", len(body), kind) + body
                   + struct.pack(">I", zlib.crc32(kind + body)))
    return b"".join(out)


def png_text(data: bytes) -> str:
    """The text tesseract reads in a PNG: the same engine, language and page layout (psm 3)
    as the tools env's ``ocr_image``, so what passes here is what an agent can read."""
    png_chunks(data)  # a damaged chunk fails here; Pillow alone would skip some CRCs
    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()  # decodes every row: truncated pixel data fails here
    except (OSError, SyntaxError, ValueError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ImageReadError(f"the pixels do not decode ({reason})") from None
    with tempfile.NamedTemporaryFile(suffix=".png") as f:
        f.write(data)
        f.flush()
        try:
            proc = subprocess.run(
                ["tesseract", f.name, "stdout", "--psm", "3", "-l", "eng"],
                capture_output=True, timeout=OCR_TIMEOUT_S, check=False,
                env={**os.environ, **OCR_THREADS},
            )
        except FileNotFoundError:
            raise ImageReadError(
                "the tesseract CLI is not installed (apt-get install tesseract-ocr)"
            ) from None
        except subprocess.TimeoutExpired:
            raise ImageReadError(f"OCR took over {OCR_TIMEOUT_S}s") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines() or [str(proc.returncode)]
        raise ImageReadError(f"tesseract failed: {err[-1]}")
    return proc.stdout.decode("utf-8", "replace")
