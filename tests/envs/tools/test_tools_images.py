"""Image tools on real Pillow images; OCR through the real tesseract CLI."""

from __future__ import annotations

from PIL import Image, ImageFont
from tools_helpers import FONT, ok, run, text_image

from guiforge.envs.tools import ToolContext

LINES = ["INVOICE TOTAL 511.70", "Due 2025-04-11"]


def _scan(ctx: ToolContext, name: str = "scan.png") -> str:
    text_image(LINES).save(ctx.workspace / name)
    return name


def test_open_and_info(ctx: ToolContext):
    ref = ok(ctx, "open_image", path=_scan(ctx))
    assert ref == {"handle": "img-1", "width": 900, "height": 300, "mode": "RGB"}
    assert ok(ctx, "image_info", image="img-1")["width"] == 900
    assert ok(ctx, "image_info", image="scan.png")["height"] == 300


def test_ocr_reads_printed_text(ctx: ToolContext):
    result = ok(ctx, "ocr_image", image=_scan(ctx))
    assert "INVOICE TOTAL 511.70" in result["text"]
    assert "2025-04-11" in result["text"]
    words = {w["text"]: w for w in result["words"]}
    assert words["TOTAL"]["confidence"] > 80


def test_find_text_returns_the_box_where_it_was_drawn(ctx: ToolContext):
    hits = ok(ctx, "find_text_in_image", image=_scan(ctx), text="total 511.70")
    assert len(hits) == 1
    font = ImageFont.truetype(FONT, 40)
    left = 40 + font.getlength("INVOICE ")
    right = 40 + font.getlength("INVOICE TOTAL 511.70")
    box = hits[0]
    assert abs(box["left"] - left) < 8 and abs(box["left"] + box["width"] - right) < 8
    assert 40 <= box["top"] <= 60 and box["height"] < 45
    assert ok(ctx, "find_text_in_image", image="scan.png", text="refund") == []


def test_crop_then_ocr_sees_only_the_region(ctx: ToolContext):
    ok(ctx, "open_image", path=_scan(ctx))
    ref = ok(ctx, "crop_image", image="img-1", left=0, top=95, right=900, bottom=170)
    assert (ref["width"], ref["height"]) == (900, 75)
    text = ok(ctx, "ocr_image", image=ref["handle"], layout="line")["text"]
    assert "2025-04-11" in text and "INVOICE" not in text
    bad = run(ctx, "crop_image", image="img-1", left=50, top=10, right=20, bottom=40)
    assert not bad.ok and "empty box" in bad.error


def test_rotated_scan_is_readable_after_rotate_image(ctx: ToolContext):
    text_image(LINES).rotate(90, expand=True).save(ctx.workspace / "sideways.png")
    ref = ok(ctx, "rotate_image", image="sideways.png", degrees=-90)
    assert (ref["width"], ref["height"]) == (900, 300)
    assert "INVOICE TOTAL" in ok(ctx, "ocr_image", image=ref["handle"])["text"]


def test_deskew_levels_a_tilted_scan(ctx: ToolContext):
    page = Image.new("RGB", (900, 700), "white")
    for i in range(6):  # six lines of text, like a page's body
        page.paste(text_image(LINES).crop((0, 30, 900, 130)), (0, 40 + i * 105))
    page.rotate(1.6, expand=True, fillcolor="white", resample=Image.Resampling.BICUBIC).save(ctx.workspace / "tilt.png")
    ref = ok(ctx, "deskew_image", image="tilt.png")
    assert abs(ref["degrees"] + 1.6) < 0.15 and ref["handle"] == "img-1"
    assert ok(ctx, "deskew_image", image=ref["handle"])["degrees"] == 0.0  # level stays level


def test_zoom_magnifies_around_a_point(ctx: ToolContext):
    img = Image.new("RGB", (400, 200), "white")
    img.paste((255, 0, 0), (290, 90, 310, 110))  # a 20x20 red square centred at (300, 100)
    img.save(ctx.workspace / "dot.png")
    ref = ok(ctx, "zoom_image", image="dot.png", x=300, y=100, factor=4)
    assert (ref["width"], ref["height"]) == (400, 200)
    zoomed = ctx.images[ref["handle"]]
    assert zoomed.getpixel((200, 100)) == (255, 0, 0)
    # the square is now 80x80 px: 35 px from the centre is still red, 45 px is white
    assert zoomed.getpixel((235, 100))[1] < 30 and zoomed.getpixel((245, 100)) == (255, 255, 255)


def test_resize_grayscale_contrast_flip(ctx: ToolContext):
    img = Image.new("RGB", (200, 100), (100, 100, 100))
    img.paste((150, 60, 20), (0, 0, 100, 100))
    img.save(ctx.workspace / "two.png")
    assert ok(ctx, "resize_image", image="two.png", width=50) == {
        "handle": "img-1", "width": 50, "height": 25, "mode": "RGB"}
    assert ok(ctx, "resize_image", image="two.png", scale=1.5)["width"] == 300
    assert not run(ctx, "resize_image", image="two.png").ok

    gray = ctx.images[ok(ctx, "grayscale_image", image="two.png")["handle"]]
    assert gray.mode == "L" and gray.getpixel((150, 50)) == 100

    low = Image.new("L", (100, 10), 110)
    low.paste(150, (50, 0, 100, 10))
    low.save(ctx.workspace / "low.png")
    high = ctx.images[ok(ctx, "adjust_contrast", image="low.png", factor=2.0)["handle"]]
    assert high.getpixel((90, 5)) - high.getpixel((10, 5)) > 70  # was 40 apart

    flipped = ctx.images[ok(ctx, "flip_image", image="two.png")["handle"]]
    assert flipped.getpixel((190, 50)) == (150, 60, 20) and flipped.getpixel((10, 50)) == (100, 100, 100)


def test_draw_box_annotates_a_copy(ctx: ToolContext):
    ok(ctx, "open_image", path=_scan(ctx))
    ref = ok(ctx, "draw_box", image="img-1", left=30, top=30, right=500, bottom=100,
             color="#00ff00", line_width=4, label="total")
    boxed = ctx.images[ref["handle"]]
    assert boxed.getpixel((30, 60)) == (0, 255, 0) and boxed.getpixel((200, 31)) == (0, 255, 0)
    assert ctx.images["img-1"].getpixel((30, 60)) == (255, 255, 255)  # the input is untouched
    bad = run(ctx, "draw_box", image="img-1", left=1, top=1, right=9, bottom=9, color="notacolour")
    assert not bad.ok and "unknown colour" in bad.error


def test_save_image_writes_a_real_file(ctx: ToolContext):
    ok(ctx, "open_image", path=_scan(ctx))
    saved = ok(ctx, "save_image", image="img-1", path="out/copy.jpg")
    assert saved["path"] == "out/copy.jpg" and saved["bytes"] > 1000
    with Image.open(ctx.workspace / "out" / "copy.jpg") as back:
        assert back.format == "JPEG" and back.size == (900, 300)


def test_image_errors_are_results(ctx: ToolContext):
    (ctx.workspace / "notes.txt").write_text("not an image")
    assert "no image handle 'img-7'" in run(ctx, "image_info", image="img-7").error
    assert "not a readable image" in run(ctx, "open_image", path="notes.txt").error
    assert "outside the workspace" in run(ctx, "open_image", path="../../etc/hostname").error
    assert "no file 'missing.png'" in run(ctx, "ocr_image", image="missing.png").error
