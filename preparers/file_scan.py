"""A document's clean page render made to look like a flatbed scan or a phone photo.

``draw_look(kind, key)`` draws a look's parameters from a seed (the key is what the bytes
must depend on: world, document, seed); ``look_png(world, doc, look)`` renders the page and
applies them (``degrade_png`` on a page render already made), returning PNG bytes. Same png and look, same bytes (numpy and Pillow only, no clock, no
global random state).

- scan: the page slightly rotated on a grey scanner bed, off-white paper with grain, uneven
  toner (ink fades in patches), a slight blur, sensor noise and JPEG artefacts.
- photo: the page in perspective on a table, lit unevenly (a brightness gradient, a soft
  shadow over one side, darker corners), defocus blur, colour sensor noise and JPEG
  artefacts (a ``resolution`` below 1 also downsamples; drawn looks keep 1.0, see there).

The strengths are tuned so tesseract (the tools' OCR) still reads the total on nearly every
scan and on most photos: ``bench/scans.py`` measures it.
"""

from __future__ import annotations

import hashlib
import io
import json
from typing import Any, Literal

import numpy as np
from PIL import Image, ImageFilter
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from guiforge.preparers.file_image import document_png, pdf_to_png, strip_volatile_chunks
from guiforge.preparers.file_pdf import document_pdf
from guiforge.worlds.model import Document, World

LookKind = Literal["clean", "scan", "photo"]
LOOKS: tuple[str, ...] = ("clean", "scan", "photo")
# Degraded pages start from a finer render than the clean 110 dpi one: at 110 dpi skew,
# blur and JPEG push tesseract's layout analysis over the edge (a total read on 16 of 20
# scans), from 140 dpi on 39 of 40 scans and 37 of 40 photos (bench/scans.py)
SCAN_DPI = 140


class _Look(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seed: int = 0  # which draw of the parameters (with the world and document)
    noise_seed: int = 0  # drives the noise fields


class CleanLook(_Look):
    kind: Literal["clean"] = "clean"


class ScanLook(_Look):
    kind: Literal["scan"] = "scan"
    dpi: int = Field(default=SCAN_DPI, ge=72, le=300)  # the page's render before degrading
    skew_deg: float = Field(ge=-5, le=5)  # counter-clockwise
    margin: float = Field(ge=0, le=0.2)  # grey bed around the page, share of the page width
    offset: tuple[float, float] = (0.0, 0.0)  # page shift on the bed, share of the margin
    bed_grey: int = Field(ge=0, le=255)
    paper: tuple[int, int, int]  # paper tone (RGB)
    grain: float = Field(ge=0, le=30)  # paper texture, grey levels
    toner_fade: float = Field(ge=0, le=0.6)  # how much ink fades where the toner is thin
    blur: float = Field(ge=0, le=3)  # Gaussian radius, pixels
    noise: float = Field(ge=0, le=30)  # sensor noise sigma, grey levels
    jpeg_quality: int = Field(ge=10, le=100)


class PhotoLook(_Look):
    kind: Literal["photo"] = "photo"
    dpi: int = Field(default=SCAN_DPI, ge=72, le=300)
    # each page corner's shift (tl, tr, br, bl), share of the page's width / height
    corners: tuple[tuple[float, float], ...] = Field(min_length=4, max_length=4)
    rotate_deg: float = Field(ge=-10, le=10)
    margin: float = Field(ge=0, le=0.4)  # table around the page, share of the page width
    table: tuple[int, int, int]  # table surface colour
    table_grain: float = Field(ge=0, le=60)
    light_gradient: tuple[float, float]  # brightness change across x and y (share)
    shadow: float = Field(ge=0, le=0.6)  # darkening under the shadow
    shadow_angle_deg: float
    vignette: float = Field(ge=0, le=0.6)
    blur: float = Field(ge=0, le=4)
    noise: float = Field(ge=0, le=30)
    # output pixels per page pixel: a phone photo holds less detail than a scan; at 110 dpi
    # even 0.97 lost totals (8 of 12 read), from the 140 dpi render 0.9 reads 19 of 20
    resolution: float = Field(gt=0.3, le=1.0)
    jpeg_quality: int = Field(ge=10, le=100)


Look = CleanLook | ScanLook | PhotoLook
_MADE: dict[str, bytes] = {}  # recent degraded pages by (PDF, look), oldest first
_MADE_MAX = 16  # about 1.5 MB each
_MODELS: dict[str, type[_Look]] = {"clean": CleanLook, "scan": ScanLook, "photo": PhotoLook}


def look_rng(key: Any, salt: str = "") -> np.random.Generator:
    digest = hashlib.sha256(json.dumps([key, salt], sort_keys=True, default=str).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def draw_look(kind: str, key: Any) -> dict[str, Any]:
    """A look's parameters drawn from ``key`` (JSON-able: [world, document, seed], the seed
    last), rounded so the recorded values are the applied ones."""
    rng = look_rng(key, kind)
    seed = int(key[-1]) if isinstance(key, list | tuple) and isinstance(key[-1], int) else 0
    common = {"kind": kind, "seed": seed, "noise_seed": int(rng.integers(0, 2**31))}
    u = lambda lo, hi: float(rng.uniform(lo, hi))  # noqa: E731
    if kind == "clean":
        return {"kind": "clean", "seed": seed}
    if kind == "scan":
        paper = 246 + rng.integers(-6, 6)
        return _rounded({
            **common,
            "skew_deg": u(0.3, 2.0) * (1 if rng.random() < 0.5 else -1),
            "margin": u(0.02, 0.05), "offset": (u(-0.8, 0.8), u(-0.8, 0.8)),
            "bed_grey": int(rng.integers(95, 160)),
            "paper": (int(paper + 3), int(paper + 1), int(paper - 4)),
            "grain": u(2, 6), "toner_fade": u(0.1, 0.35), "blur": u(0.25, 0.5),
            "noise": u(2, 6), "jpeg_quality": int(rng.integers(55, 85)),
        })
    if kind == "photo":
        j = lambda: (u(-0.04, 0.04), u(-0.03, 0.03))  # noqa: E731
        tables = [(139, 101, 68), (92, 70, 52), (170, 160, 150), (60, 62, 66), (196, 176, 140)]
        return _rounded({
            **common,
            "corners": (j(), j(), j(), j()), "rotate_deg": u(-2.5, 2.5), "margin": u(0.06, 0.14),
            "table": tables[int(rng.integers(len(tables)))], "table_grain": u(10, 25),
            "light_gradient": (u(-0.18, 0.18), u(-0.18, 0.18)),
            "shadow": u(0.08, 0.22), "shadow_angle_deg": u(0, 360), "vignette": u(0.1, 0.25),
            "blur": u(0.25, 0.45), "noise": u(3, 5), "resolution": u(0.88, 0.95),
            "jpeg_quality": int(rng.integers(60, 85)),
        })
    raise ValueError(f"look {kind!r} is not one of {', '.join(LOOKS)}")


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, tuple | list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def parse_look(value: dict[str, Any]) -> Look:
    """The validated look; a bad one raises ValueError with one line naming the field."""
    kind = value.get("kind")
    if kind not in _MODELS:
        raise ValueError(f"look.kind: {kind!r} is not one of {', '.join(LOOKS)}")
    try:
        return _MODELS[kind].model_validate(value)  # type: ignore[return-value]
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ValueError(f"look.{where}: {err['msg']}") from None


def look_png(world: World, doc: Document, look: Look) -> bytes:
    """The document's page as the look shows it: the clean render (``file_image``) for
    clean, else the PDF rendered at the look's dpi and degraded."""
    if isinstance(look, CleanLook):
        return document_png(world, doc)
    pdf = document_pdf(world, doc)
    # a task's workspace is rebuilt at every gate and rollout reset: the same page under the
    # same look is made once per process (keyed by content, so a changed world misses)
    key = hashlib.sha256(pdf + look.model_dump_json().encode()).hexdigest()
    if key not in _MADE:
        page = pdf_to_png(pdf, dpi=look.dpi, what=f"document {doc.document_id}")
        if len(_MADE) >= _MADE_MAX:
            _MADE.pop(next(iter(_MADE)))
        _MADE[key] = degrade_png(page, look)
    return _MADE[key]


def degrade_png(png: bytes, look: Look) -> bytes:
    """The page in ``png`` as the look shows it, as PNG bytes."""
    if isinstance(look, CleanLook):
        return png
    with Image.open(io.BytesIO(png)) as img:
        page = np.asarray(img.convert("RGB"), dtype=np.float32)
    rng = np.random.default_rng(look.noise_seed)
    out = _scan(page, look, rng) if isinstance(look, ScanLook) else _photo(page, look, rng)
    return _encode(out, look.jpeg_quality)


# --- the two looks ----------------------------------------------------------------------


def _scan(page: np.ndarray, look: ScanLook, rng: np.random.Generator) -> Image.Image:
    h, w = page.shape[:2]
    paper = np.array(look.paper, dtype=np.float32)
    ink = 1.0 - page / 255.0  # 0 on white paper, 1 on black ink
    ink *= 1.0 - look.toner_fade * _smooth_field(rng, (h, w), (9, 7))[..., None]
    grain = look.grain * (_smooth_field(rng, (h, w), (h // 3, w // 3)) - 0.5)
    sheet = paper * (1.0 - ink) + grain[..., None]
    a = np.deg2rad(look.skew_deg)
    m = round(look.margin * w)
    # the bed holds the whole turned page: a corner is never cut off
    tw = abs(np.cos(a)) * w + abs(np.sin(a)) * h
    th = abs(np.sin(a)) * w + abs(np.cos(a)) * h
    size = (round(tw) + 2 * m, round(th) + 2 * m)
    cx = size[0] / 2 + look.offset[0] * m
    cy = size[1] / 2 + look.offset[1] * m
    corners = [_turn(x - w / 2, y - h / 2, a, cx, cy) for x, y in ((0, 0), (w, 0), (w, h), (0, h))]
    bed = np.full((size[1], size[0], 3), float(look.bed_grey), dtype=np.float32)
    bed += 6.0 * (_smooth_field(rng, (size[1], size[0]), (4, 4)) - 0.5)[..., None]
    img = _place(sheet, corners, bed)
    img = img.filter(ImageFilter.GaussianBlur(look.blur))
    return _noisy(img, look.noise, rng, colour=False)


def _photo(page: np.ndarray, look: PhotoLook, rng: np.random.Generator) -> Image.Image:
    h, w = page.shape[:2]
    m = round(look.margin * w)
    size = (w + 2 * m, h + 2 * m)
    a = np.deg2rad(look.rotate_deg)
    cx, cy = size[0] / 2, size[1] / 2
    base = ((0, 0), (w, 0), (w, h), (0, h))
    corners = [_turn(x + dx * w - w / 2, y + dy * h - h / 2, a, cx, cy)
               for (x, y), (dx, dy) in zip(base, look.corners, strict=True)]
    table = np.array(look.table, dtype=np.float32)
    streaks = _smooth_field(rng, (size[1], size[0]), (size[1] // 8, 3))  # a grain along one axis
    surface = table + look.table_grain * (streaks - 0.5)[..., None]
    sheet = 250.0 * (page / 255.0) ** 1.05
    img = np.asarray(_place(sheet, corners, surface), dtype=np.float32)
    img = img * _lighting(look, size)[..., None]
    out = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))
    out = out.filter(ImageFilter.GaussianBlur(look.blur))
    small = (max(1, round(size[0] * look.resolution)), max(1, round(size[1] * look.resolution)))
    out = out.resize(small, Image.Resampling.BILINEAR)
    return _noisy(out, look.noise, rng, colour=True)


def _lighting(look: PhotoLook, size: tuple[int, int]) -> np.ndarray:
    """Brightness per pixel: a gradient across the picture, a soft-edged shadow over one
    side and darker corners (a lamp or a window light the table unevenly)."""
    w, h = size
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    x, y = x / w - 0.5, y / h - 0.5
    light = 1.0 + look.light_gradient[0] * x + look.light_gradient[1] * y
    t = np.deg2rad(look.shadow_angle_deg)
    edge = np.cos(t) * x + np.sin(t) * y  # the shadow covers where this exceeds 0.2
    light *= 1.0 - look.shadow / (1.0 + np.exp(-(edge - 0.2) / 0.05))
    light *= 1.0 - look.vignette * (x * x + y * y) * 2.0
    return light


# --- helpers ------------------------------------------------------------------------


def _turn(x: float, y: float, a: float, cx: float, cy: float) -> tuple[float, float]:
    """(x, y) about the origin turned counter-clockwise by ``a`` on screen, moved to (cx, cy)."""
    c, s = np.cos(a), np.sin(a)
    return (float(cx + c * x + s * y), float(cy - s * x + c * y))


def _place(sheet: np.ndarray, corners: list[tuple[float, float]], ground: np.ndarray) -> Image.Image:
    """The sheet drawn onto ``ground`` with its corners (tl, tr, br, bl) at ``corners``."""
    h, w = sheet.shape[:2]
    size = (ground.shape[1], ground.shape[0])
    coeffs = _perspective(corners, [(0, 0), (w, 0), (w, h), (0, h)])
    src = Image.fromarray(np.clip(sheet, 0, 255).astype(np.uint8))
    warped = src.transform(size, Image.Transform.PERSPECTIVE, coeffs, Image.Resampling.BICUBIC)
    mask = Image.new("L", (w, h), 255).transform(
        size, Image.Transform.PERSPECTIVE, coeffs, Image.Resampling.BILINEAR)
    alpha = np.asarray(mask, dtype=np.float32)[..., None] / 255.0
    out = np.asarray(warped, dtype=np.float32) * alpha + ground * (1.0 - alpha)
    return Image.fromarray(np.clip(out, 0, 255).astype(np.uint8))


def _perspective(dst: list[tuple[float, float]], src: list[tuple[float, float]]) -> list[float]:
    """Pillow's PERSPECTIVE coefficients: output pixel (x, y) at ``dst[i]`` reads ``src[i]``."""
    rows, rhs = [], []
    for (x, y), (u, v) in zip(dst, src, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        rhs.extend([u, v])
    return [float(c) for c in np.linalg.solve(np.array(rows, dtype=np.float64), np.array(rhs))]


def _smooth_field(rng: np.random.Generator, shape: tuple[int, int], cells: tuple[int, int]) -> np.ndarray:
    """Values in [0, 1] that vary smoothly over ``shape``: ``cells`` random values upsampled."""
    gh, gw = max(2, cells[0]), max(2, cells[1])
    coarse = Image.fromarray(rng.random((gh, gw), dtype=np.float32))
    return np.asarray(coarse.resize((shape[1], shape[0]), Image.Resampling.BICUBIC), dtype=np.float32)


def _noisy(img: Image.Image, sigma: float, rng: np.random.Generator, colour: bool) -> Image.Image:
    arr = np.asarray(img, dtype=np.float32)
    shape = arr.shape if colour else arr.shape[:2] + (1,)
    arr = arr + sigma * rng.standard_normal(shape, dtype=np.float32)
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))


def _encode(img: Image.Image, quality: int) -> bytes:
    """JPEG artefacts (a scanner's or a phone's compression), stored as PNG: the workspace
    file stays a .png while its pixels carry the blocks and ringing."""
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=quality, subsampling=2)
    with Image.open(io.BytesIO(buf.getvalue())) as jpeg:
        out = io.BytesIO()
        jpeg.convert("RGB").save(out, format="PNG", optimize=False, compress_level=3)
    return strip_volatile_chunks(out.getvalue())
