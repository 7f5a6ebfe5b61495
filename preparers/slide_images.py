"""Pictures for slides, drawn with PIL from a slide's image fields: a photo-like scene
(sky, sun, hills, a skyline, soft focus), a logo (a badge with initials and the name) or a
street map with a river, a park and a pin. The picture depends only on (kind, subject,
caption): the same fields give the same bytes on every run."""

from __future__ import annotations

import hashlib
import io
import random
from functools import cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

from guiforge.worlds.model import SlideImage

SIZE = (1280, 800)
FONT_DIRS = [Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/dejavu"),
             Path("/usr/share/fonts/TTF")]  # fmt: skip


def slide_image_bytes(image: SlideImage) -> bytes:
    """The picture's file: a JPEG for a photo (as a camera writes it, ~100 KB), a PNG for a
    logo or a map (flat colours)."""
    digest = hashlib.sha256(f"{image.kind}\0{image.subject}\0{image.caption}".encode()).digest()
    rng = random.Random(digest)
    draw = {"photo": _photo, "logo": _logo, "map": _map}[image.kind]
    img = draw(image, rng)
    buf = io.BytesIO()
    # PIL writes no time stamps and libjpeg encodes the same pixels the same way: stable bytes
    if image.kind == "photo":
        img.save(buf, format="JPEG", quality=85, optimize=False)
    else:
        img.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


@cache
def _font_path(bold: bool) -> str | None:
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    return next((str(d / name) for d in FONT_DIRS if (d / name).is_file()), None)


def _font(size: int, bold: bool = False) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    path = _font_path(bold)
    return ImageFont.truetype(path, size) if path else ImageFont.load_default()


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> tuple[int, int, int]:
    return tuple(round(x + (y - x) * t) for x, y in zip(a, b, strict=True))  # type: ignore[return-value]


def _photo(image: SlideImage, rng: random.Random) -> Image.Image:
    w, h = SIZE
    dusk = rng.random() < 0.35
    top, horizon = ((38, 52, 110), (246, 160, 110)) if dusk else ((70, 130, 200), (200, 225, 245))
    img = Image.new("RGB", SIZE)
    d = ImageDraw.Draw(img)
    for y in range(h):
        d.line([(0, y), (w, y)], fill=_mix(top, horizon, min(1.0, y / (h * 0.62))))
    sx, sy = rng.randrange(150, w - 150), rng.randrange(80, 260)
    d.ellipse([sx - 55, sy - 55, sx + 55, sy + 55], fill=(255, 214, 140) if dusk else (255, 246, 210))
    for layer, (base, dy) in enumerate([((96, 130, 110), 0.55), ((70, 105, 80), 0.66)]):
        pts, x = [(0, h)], 0
        y = h * dy + rng.randrange(-30, 30)
        while x <= w:
            pts.append((x, y))
            x += rng.randrange(40, 120)
            y = max(h * 0.4, min(h * 0.8, y + rng.randrange(-45, 45)))
        pts += [(w, h)]
        d.polygon(pts, fill=_mix(base, (40, 50, 70), 0.3 if dusk else 0.0 + layer * 0.05))
    x = rng.randrange(-40, 40)
    while x < w:  # a skyline of buildings with lit windows
        bw, bh = rng.randrange(50, 130), rng.randrange(120, 380)
        shade = rng.randrange(60, 120)
        body = (shade, shade + 5, shade + 15)
        d.rectangle([x, h * 0.78 - bh, x + bw, h], fill=body)
        for wy in range(int(h * 0.78 - bh) + 12, int(h * 0.78), 22):
            for wx in range(x + 8, x + bw - 10, 16):
                if rng.random() < (0.55 if dusk else 0.25):
                    d.rectangle([wx, wy, wx + 7, wy + 10], fill=(255, 226, 150) if dusk else (185, 205, 225))
        x += bw + rng.randrange(4, 26)
    d.rectangle([0, h * 0.78, w, h], fill=(58, 62, 66))
    img = img.filter(ImageFilter.GaussianBlur(1.6))  # a lens, not a vector drawing
    if image.caption:
        _label(img, image.caption, (24, h - 64))
    return img


def _label(img: Image.Image, text: str, at: tuple[int, int]) -> None:
    d = ImageDraw.Draw(img, "RGBA")
    f = _font(30)
    box = d.textbbox(at, text, font=f)
    d.rectangle([box[0] - 10, box[1] - 8, box[2] + 10, box[3] + 8], fill=(0, 0, 0, 140))
    d.text(at, text, font=f, fill=(255, 255, 255))


def _logo(image: SlideImage, rng: random.Random) -> Image.Image:
    w, h = SIZE
    hue = [(31, 78, 121), (112, 48, 160), (0, 112, 96), (192, 80, 0), (160, 30, 60)][rng.randrange(5)]
    img = Image.new("RGB", SIZE, (250, 250, 248))
    d = ImageDraw.Draw(img)
    cx, cy, r = w // 2, int(h * 0.4), 190
    if rng.random() < 0.5:
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=hue)
    else:
        d.rounded_rectangle([cx - r, cy - r, cx + r, cy + r], radius=60, fill=hue)
    d.arc([cx - r + 28, cy - r + 28, cx + r - 28, cy + r - 28], 200, 340, fill=(255, 255, 255), width=10)
    words = [x for x in image.subject.replace("-", " ").split() if x[:1].isalnum()]
    initials = "".join(x[0] for x in words[:3]).upper() or "?"
    f = _font(150, bold=True)
    d.text((cx, cy + 10), initials, font=f, fill=(255, 255, 255), anchor="mm")
    name = _font(58, bold=True)
    d.text((cx, int(h * 0.8)), image.subject[:36], font=name, fill=hue, anchor="mm")
    if image.caption:
        d.text((cx, int(h * 0.9)), image.caption[:60], font=_font(30), fill=(90, 90, 90), anchor="mm")
    return img


def _map(image: SlideImage, rng: random.Random) -> Image.Image:
    w, h = SIZE
    img = Image.new("RGB", SIZE, (242, 239, 233))
    d = ImageDraw.Draw(img)
    for _ in range(3):  # parks
        x, y = rng.randrange(0, w - 200), rng.randrange(0, h - 160)
        d.rounded_rectangle([x, y, x + rng.randrange(120, 260), y + rng.randrange(90, 200)],
                            radius=24, fill=(200, 228, 190))  # fmt: skip
    river, y = [], rng.randrange(150, h - 150)
    for x in range(-20, w + 40, 40):
        y = max(60, min(h - 60, y + rng.randrange(-35, 36)))
        river.append((x, y))
    d.line(river, fill=(160, 200, 235), width=46, joint="curve")
    step = rng.randrange(90, 130)
    for x in range(rng.randrange(20, step), w, step):
        d.line([(x, 0), (x + rng.randrange(-40, 40), h)], fill=(255, 255, 255), width=10)
    for y in range(rng.randrange(20, step), h, step):
        d.line([(0, y), (w, y + rng.randrange(-40, 40))], fill=(255, 255, 255), width=10)
    d.line([(0, rng.randrange(h)), (w, rng.randrange(h))], fill=(250, 215, 120), width=16)  # main road
    px, py = w // 2 + rng.randrange(-120, 120), h // 2 + rng.randrange(-80, 80)
    d.ellipse([px - 26, py - 70, px + 26, py - 18], fill=(214, 48, 49))
    d.polygon([(px - 22, py - 36), (px + 22, py - 36), (px, py)], fill=(214, 48, 49))
    d.ellipse([px - 9, py - 53, px + 9, py - 35], fill=(255, 255, 255))
    _label(img, image.subject[:48], (px + 34, py - 60))
    if image.caption:
        _label(img, image.caption[:70], (24, h - 64))
    d.text((w - 90, 24), "N", font=_font(40, bold=True), fill=(60, 60, 60))
    d.line([(w - 76, 70), (w - 76, 130)], fill=(60, 60, 60), width=4)
    return img
