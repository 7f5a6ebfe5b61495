"""Image tools (Pillow) and OCR (the ``tesseract`` CLI). Every transform returns a new
handle and leaves its input untouched, so the agent can go back to an earlier image."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Annotated, Literal

from PIL import Image, ImageDraw, ImageEnhance, ImageFont, ImageOps
from pydantic import BaseModel, Field

from guiforge.envs.tools.context import ImageRef, ToolContext
from guiforge.envs.tools.registry import ToolError, tool

Pixels = Annotated[int, Field(ge=0, le=20_000)]
Factor = Annotated[float, Field(gt=0, le=20)]
OCR_TIMEOUT_S = 20.0  # under the manager's 30 s step deadline


class OcrWord(BaseModel):
    text: str
    confidence: float
    left: int
    top: int
    width: int
    height: int


class OcrResult(BaseModel):
    text: str
    words: list[OcrWord]


class SavedFile(BaseModel):
    path: str
    bytes: int


def _box(img: Image.Image, left: int, top: int, right: int, bottom: int) -> tuple[int, int, int, int]:
    if right <= left or bottom <= top:
        raise ToolError(f"empty box ({left},{top})-({right},{bottom}): right > left and bottom > top")
    if left >= img.width or top >= img.height:
        raise ToolError(f"box starts outside the {img.width}x{img.height} image")
    return left, top, min(right, img.width), min(bottom, img.height)


@tool("images")
def open_image(ctx: ToolContext, path: str) -> ImageRef:
    """Load an image file from the workspace and return a handle for the other image tools.

    Args:
        path: image file path relative to the workspace (png, jpg, gif, bmp, tiff, webp)
    """
    return ctx.add_image(ctx.image(path))


@tool("images")
def image_info(ctx: ToolContext, image: str) -> ImageRef:
    """Dimensions of an image: its width and height in pixels and its colour mode.

    Args:
        image: image handle such as img-1, or a workspace image path
    """
    img = ctx.image(image)
    return ImageRef(handle=image, width=img.width, height=img.height, mode=img.mode)


@tool("images")
def crop_image(ctx: ToolContext, image: str, left: Pixels, top: Pixels, right: Pixels,
               bottom: Pixels) -> ImageRef:
    """Crop an image to a pixel rectangle (cut out a region) and return the region as a new image.

    Args:
        image: image handle such as img-1, or a workspace image path
        left: x of the left edge in pixels
        top: y of the top edge in pixels
        right: x of the right edge in pixels (exclusive)
        bottom: y of the bottom edge in pixels (exclusive)
    """
    img = ctx.image(image)
    return ctx.add_image(img.crop(_box(img, left, top, right, bottom)))


@tool("images")
def zoom_image(ctx: ToolContext, image: str, x: Pixels, y: Pixels, factor: Factor = 2.0) -> ImageRef:
    """Zoom in (magnify) around a point: crops a window 1/factor of the size centred on (x, y)
    and enlarges it back to the original size, making small text readable.

    Args:
        image: image handle such as img-1, or a workspace image path
        x: x of the point to zoom on, in pixels
        y: y of the point to zoom on, in pixels
        factor: magnification, e.g. 2 doubles the size of everything
    """
    img = ctx.image(image)
    w, h = max(1, round(img.width / factor)), max(1, round(img.height / factor))
    left = min(max(0, x - w // 2), img.width - w)
    top = min(max(0, y - h // 2), img.height - h)
    region = img.crop((left, top, left + w, top + h))
    return ctx.add_image(region.resize((round(w * factor), round(h * factor)), Image.Resampling.LANCZOS))


@tool("images")
def rotate_image(ctx: ToolContext, image: str, degrees: float, expand: bool = True) -> ImageRef:
    """Rotate an image counter-clockwise by some degrees (use negative degrees for clockwise).

    Args:
        image: image handle such as img-1, or a workspace image path
        degrees: angle counter-clockwise; -90 turns a page clockwise
        expand: grow the canvas so that no corner is cut off
    """
    img = ctx.image(image)
    fill = "white" if img.mode in ("RGB", "L") else None
    return ctx.add_image(img.rotate(degrees, expand=expand, resample=Image.Resampling.BICUBIC,
                                    fillcolor=fill))


class DeskewedImage(ImageRef):
    degrees: float  # the rotation applied (counter-clockwise), 0 when the lines were level


@tool("images")
def deskew_image(ctx: ToolContext, image: str,
                 max_degrees: Annotated[float, Field(gt=0, le=15)] = 5.0) -> DeskewedImage:
    """Straighten (deskew) a slightly tilted scan or photo of a page: finds the angle of its
    text lines and rotates them level, which helps OCR read rows and columns.

    Args:
        image: image handle such as img-1, or a workspace image path
        max_degrees: the largest tilt to look for, either way
    """
    img = ctx.image(image)
    degrees = text_skew(img, max_degrees)
    fill = "white" if img.mode in ("RGB", "L") else None
    out = img.rotate(degrees, expand=True, resample=Image.Resampling.BICUBIC, fillcolor=fill) if degrees else img
    ref = ctx.add_image(out)
    return DeskewedImage(**ref.model_dump(), degrees=degrees)


def text_skew(img: Image.Image, max_degrees: float = 5.0) -> float:
    """The counter-clockwise turn (degrees, to 0.05) that levels a page's text lines: the
    angle whose rows of dark pixels are most sharply separated (a projection profile),
    searched coarse then fine on a copy at most 800 pixels wide."""
    # heavy: numpy, imported when this runs
    import numpy as np

    grey = ImageOps.grayscale(img)
    if grey.width > 800:
        grey = grey.resize((800, max(1, round(grey.height * 800 / grey.width))), Image.Resampling.BILINEAR)
    px = np.asarray(grey, dtype=np.float32)
    ink = Image.fromarray(((px < min(128.0, float(np.median(px)) - 60.0)) * 255).astype(np.uint8))

    def sharpness(deg: float) -> float:
        rows = np.asarray(ink.rotate(deg, resample=Image.Resampling.NEAREST), dtype=np.float32).sum(axis=1)
        return float(np.square(np.diff(rows)).sum())

    def best(lo: float, hi: float, step: float) -> float:
        n = int(round((hi - lo) / step))
        return max((lo + i * step for i in range(n + 1)), key=lambda d: (sharpness(d), -abs(d)))

    coarse = best(-max_degrees, max_degrees, 0.5)
    fine = best(coarse - 0.5, coarse + 0.5, 0.05)
    return round(fine, 2) if abs(fine) >= 0.05 else 0.0


@tool("images")
def resize_image(ctx: ToolContext, image: str, width: Pixels | None = None,
                 height: Pixels | None = None, scale: Factor | None = None) -> ImageRef:
    """Resize (scale) an image: make it smaller or larger to a width and/or height in pixels,
    or by a scale factor; giving only one side keeps the aspect ratio.

    Args:
        image: image handle such as img-1, or a workspace image path
        width: new width in pixels
        height: new height in pixels
        scale: multiply both sides by this factor instead of giving width/height
    """
    img = ctx.image(image)
    if scale is not None:
        size = (round(img.width * scale), round(img.height * scale))
    elif width or height:
        size = (width or round(img.width * height / img.height),
                height or round(img.height * width / img.width))
    else:
        raise ToolError("give width, height or scale")
    if min(size) < 1 or size[0] * size[1] > 40_000_000:
        raise ToolError(f"target size {size[0]}x{size[1]} is out of range")
    return ctx.add_image(img.resize(size, Image.Resampling.LANCZOS))


@tool("images")
def grayscale_image(ctx: ToolContext, image: str) -> ImageRef:
    """Convert an image to grayscale (black and white tones), e.g. before OCR.

    Args:
        image: image handle such as img-1, or a workspace image path
    """
    return ctx.add_image(ImageOps.grayscale(ctx.image(image)))


@tool("images")
def adjust_contrast(ctx: ToolContext, image: str, factor: Factor = 1.5) -> ImageRef:
    """Increase or decrease image contrast; factor 1 keeps it, 2 doubles it, 0.5 halves it.

    Args:
        image: image handle such as img-1, or a workspace image path
        factor: contrast multiplier
    """
    img = ctx.image(image)
    if img.mode not in ("RGB", "L"):
        img = img.convert("RGB")
    return ctx.add_image(ImageEnhance.Contrast(img).enhance(factor))


@tool("images")
def flip_image(ctx: ToolContext, image: str,
               direction: Literal["horizontal", "vertical"] = "horizontal") -> ImageRef:
    """Mirror an image left-right (horizontal) or upside down (vertical).

    Args:
        image: image handle such as img-1, or a workspace image path
        direction: horizontal mirrors left-right, vertical mirrors top-bottom
    """
    img = ctx.image(image)
    return ctx.add_image(ImageOps.mirror(img) if direction == "horizontal" else ImageOps.flip(img))


@tool("images")
def draw_box(ctx: ToolContext, image: str, left: Pixels, top: Pixels, right: Pixels, bottom: Pixels,
             color: str = "red", line_width: Annotated[int, Field(ge=1, le=50)] = 3,
             label: str | None = None) -> ImageRef:
    """Annotate an image: draw a rectangle (bounding box) with an optional text label, returned
    as a new image.

    Args:
        image: image handle such as img-1, or a workspace image path
        left: x of the left edge in pixels
        top: y of the top edge in pixels
        right: x of the right edge in pixels
        bottom: y of the bottom edge in pixels
        color: colour name or #rrggbb
        line_width: outline thickness in pixels
        label: text written just above the box
    """
    img = ctx.image(image).convert("RGB")
    box = _box(img, left, top, right, bottom)
    draw = ImageDraw.Draw(img)
    try:
        draw.rectangle(box, outline=color, width=line_width)
        if label:
            font = ImageFont.load_default(size=max(12, line_width * 5))
            draw.text((box[0], max(0, box[1] - line_width - 14)), label, fill=color, font=font)
    except ValueError:
        raise ToolError(f"unknown colour {color!r}; use a name like red or #ff0000") from None
    return ctx.add_image(img)


def _tesseract(img: Image.Image, psm: int) -> list[dict[str, str]]:
    with tempfile.TemporaryDirectory(prefix="guiforge-ocr-") as tmp:
        src = Path(tmp) / "in.png"
        img.convert("RGB").save(src)
        try:
            proc = subprocess.run(
                ["tesseract", str(src), "stdout", "--psm", str(psm), "-l", "eng", "tsv"],
                capture_output=True, text=True, timeout=OCR_TIMEOUT_S, check=False, start_new_session=True,
                # tesseract's OpenMP threads fight over few cores: one thread is ~3x faster here
                env={**os.environ, "OMP_THREAD_LIMIT": "1"},
            )
        except FileNotFoundError:
            raise ToolError("the tesseract CLI is not installed (apt-get install tesseract-ocr)") from None
        except subprocess.TimeoutExpired:
            raise ToolError(f"OCR took longer than {OCR_TIMEOUT_S:.0f}s; crop the image first") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise ToolError(f"tesseract failed: {last}")
    return list(csv.DictReader(io.StringIO(proc.stdout), delimiter="\t", quoting=csv.QUOTE_NONE))


def ocr_words(img: Image.Image, psm: int = 3, min_confidence: float = 0.0) -> OcrResult:
    words: list[OcrWord] = []
    lines: dict[tuple[str, str, str], list[str]] = {}
    for row in _tesseract(img, psm):
        text = (row.get("text") or "").strip()
        conf = float(row.get("conf") or -1)
        if row.get("level") != "5" or not text or conf < min_confidence:
            continue
        words.append(OcrWord(text=text, confidence=round(conf, 1), left=int(row["left"]),
                             top=int(row["top"]), width=int(row["width"]), height=int(row["height"])))
        lines.setdefault((row["block_num"], row["par_num"], row["line_num"]), []).append(text)
    return OcrResult(text="\n".join(" ".join(w) for w in lines.values()), words=words)


@tool("images")
def ocr_image(ctx: ToolContext, image: str,
              layout: Literal["auto", "block", "line", "sparse"] = "auto",
              min_confidence: Annotated[float, Field(ge=0, le=100)] = 0.0) -> OcrResult:
    """Read (extract) all the text in an image with OCR (tesseract): returns the text and
    every word with its pixel box and confidence.

    Args:
        image: image handle such as img-1, or a workspace image path
        layout: auto page layout, one uniform text block, a single line, or sparse scattered text
        min_confidence: drop words recognised with less confidence (0-100)
    """
    psm = {"auto": 3, "block": 6, "line": 7, "sparse": 11}[layout]
    return ocr_words(ctx.image(image), psm, min_confidence)


@tool("images")
def find_text_in_image(ctx: ToolContext, image: str, text: str) -> list[OcrWord]:
    """Locate a word or phrase in an image with OCR and return its pixel boxes (empty if absent).

    Args:
        image: image handle such as img-1, or a workspace image path
        text: word or phrase to find, case-insensitive
    """
    needle = text.casefold().split()
    if not needle:
        raise ToolError("text is empty")
    words = ocr_words(ctx.image(image), 11).words
    hits: list[OcrWord] = []
    for i in range(len(words) - len(needle) + 1):
        run = words[i : i + len(needle)]
        if all(n in w.text.casefold() for n, w in zip(needle, run, strict=True)):
            left, top = min(w.left for w in run), min(w.top for w in run)
            right = max(w.left + w.width for w in run)
            bottom = max(w.top + w.height for w in run)
            hits.append(OcrWord(text=" ".join(w.text for w in run),
                                confidence=min(w.confidence for w in run),
                                left=left, top=top, width=right - left, height=bottom - top))
    return hits


@tool("images")
def save_image(ctx: ToolContext, image: str, path: str) -> SavedFile:
    """Save an image handle to a workspace file; the format follows the extension (.png, .jpg).

    Args:
        image: image handle such as img-1
        path: target path relative to the workspace
    """
    img = ctx.image(image)
    target = ctx.path(path, must_exist=False)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.suffix.lower() in (".jpg", ".jpeg") and img.mode not in ("RGB", "L"):
        img = img.convert("RGB")
    try:
        img.save(target)
    except (ValueError, KeyError):
        raise ToolError(f"cannot tell the image format from {path!r}; end it in .png or .jpg") from None
    return SavedFile(path=ctx.relative(target), bytes=target.stat().st_size)
