"""Scan and photo looks for document images: seeded (same world, document and seed, same
bytes), recorded (the manifest's parameters rebuild the same pixels), visibly degraded (a
measurable skew on the grey scanner bed, noise on blank paper, a table around a photo), and
still legible to tesseract, the OCR the file gate and the tools use. Real poppler, real
tesseract, real template worlds."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from PIL import Image

from guiforge.gates.file_gate import check_files
from guiforge.preparers import file_scan
from guiforge.preparers.files import build_workspace
from guiforge.preparers.image_looks import look_for_wording, resolve_look

WORLD, DOC, FACT = "expense_report", "inv_hotel", "doc:inv_hotel.total"


def _spec(look, doc: str = DOC, name: str = "page.png") -> dict:
    return {"documents": [{"document": doc, "format": "png", "name": name, "look": look}]}


def _pixels(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as img:
        assert img.format == "PNG"
        return np.asarray(img.convert("L"), dtype=np.float32)


def _fact(world, source: str):
    return next(f for f in world.facts if f.source == source)


@pytest.fixture(scope="module")
def built(worlds) -> dict[str, tuple[bytes, dict]]:
    """look -> (png bytes, the manifest's look) for one invoice, each built once."""
    out = {}
    for look in ("clean", "scan", "photo"):
        ws = build_workspace(worlds[WORLD], _spec(look))
        out[look] = (ws.files["page.png"], ws.manifest["page.png"].look)
    return out


def test_same_inputs_same_bytes_and_another_seed_another_scan(worlds, built):
    world = worlds[WORLD]
    for look in ("scan", "photo"):
        file_scan._MADE.clear()  # made again from the PDF, not the process's recent pages
        again = build_workspace(world, _spec(look)).files["page.png"]
        assert again == built[look][0], look
    reseeded = build_workspace(world, _spec({"kind": "scan", "seed": 5})).files["page.png"]
    assert reseeded != built["scan"][0]
    # another document under the same look and seed is drawn differently too
    other = build_workspace(world, _spec("scan", doc="rcpt_taxi_1"))
    assert other.manifest["page.png"].look["skew_deg"] != built["scan"][1]["skew_deg"]


def test_the_recorded_parameters_are_the_applied_ones(worlds, built):
    data, look = built["scan"]
    assert look["kind"] == "scan" and 0.3 <= abs(look["skew_deg"]) <= 2.0
    assert {"noise_seed", "blur", "noise", "toner_fade", "jpeg_quality", "paper"} <= set(look)
    file_scan._MADE.clear()
    assert build_workspace(worlds[WORLD], _spec(look)).files["page.png"] == data
    # a parameter given by hand is kept, the rest drawn as before
    tilted = build_workspace(worlds[WORLD], _spec({"kind": "scan", "skew_deg": -1.5}))
    assert tilted.manifest["page.png"].look == {**look, "skew_deg": -1.5}
    assert resolve_look(look, ["any", "key"]).model_dump(mode="json") == look


def _paper_top(px: np.ndarray, x: int, bed: float) -> float:
    """The first row in column ``x`` (median over 9 columns) that is paper, not scanner bed."""
    threshold = (bed + 235.0) / 2
    cols = px[:, x - 4 : x + 5]
    return float(np.median([np.argmax(cols[:, i] > threshold) for i in range(cols.shape[1])]))


def test_a_scan_is_skewed_on_a_grey_bed_with_noise(built):
    clean = _pixels(built["clean"][0])
    data, look = built["scan"]
    px = _pixels(data)
    assert px.shape[0] > clean.shape[0] and px.shape[1] > clean.shape[1]  # the bed around the page
    assert abs(float(px[2:12, 2:12].mean()) - look["bed_grey"]) < 15  # a grey corner, not paper
    # the page's top edge: its slope is the skew, measured from the pixels alone
    left, right = round(px.shape[1] * 0.25), round(px.shape[1] * 0.75)
    y_left, y_right = _paper_top(px, left, look["bed_grey"]), _paper_top(px, right, look["bed_grey"])
    measured = math.degrees(math.atan2(y_left - y_right, right - left))
    assert abs(measured - look["skew_deg"]) < 0.25, (measured, look["skew_deg"])
    # blank paper: flat in the clean render, grainy and noisy in the scan
    def blank(img: np.ndarray) -> np.ndarray:  # below the invoice's last line, above its footer
        h, w = img.shape
        return img[round(h * 0.82) : round(h * 0.86), round(w * 0.3) : round(w * 0.6)]

    assert blank(clean).size and blank(clean).std() == 0
    assert blank(px).std() > 1.5 and blank(px).mean() < 252


def test_a_photo_shows_the_page_on_a_table_and_uneven_light(built):
    data, look = built["photo"]
    with Image.open(io.BytesIO(data)) as img:
        rgb = np.asarray(img.convert("RGB"), dtype=np.float32)
    corner = rgb[2:20, 2:20].reshape(-1, 3).mean(axis=0)
    # the table's colour at the corner (under the photo's light, not the page's white)
    assert np.abs(corner - np.array(look["table"]) * 0.75).max() < 70 and corner.mean() < 215
    h, w = rgb.shape[:2]
    halves = [rgb[round(h * 0.8) : round(h * 0.9), round(w * a) : round(w * b)].mean()
              for a, b in ((0.15, 0.3), (0.7, 0.85))]
    assert abs(halves[0] - halves[1]) > 1.0  # light falls off across the page


@pytest.mark.parametrize("look", ["scan", "photo"])
@pytest.mark.parametrize(("scenario", "doc_id"),
                         [("expense_report", "inv_hotel"), ("freelance_invoicing", "invoice_1")])
def test_tesseract_still_reads_the_total(worlds, look, scenario, doc_id):
    world = worlds[scenario]
    ws = build_workspace(world, _spec(look, doc=doc_id))
    assert ws.manifest["page.png"].look["kind"] == look
    fact = _fact(world, f"doc:{doc_id}.total")
    assert check_files(ws.files, [("page.png", fact)], required=["page.png"]) == []


def test_the_wording_picks_the_look():
    assert look_for_wording("I only have the receipt r.png as a scanned image") == "scan"
    assert look_for_wording("r.png is a photo of a receipt") == "photo"
    assert look_for_wording("It is a picture, not a text file, so read r.png") == "photo"
    assert look_for_wording("I photographed the invoice: it's inv_scan.png") == "photo"
    # a file name is not wording
    assert look_for_wording("How much is the invoice in the image inv_scan.png?") == "clean"
    assert look_for_wording("Please look at the scan inv.png") == "scan"
    assert look_for_wording("here's a pic of the receipt, r.png") == "photo"
    assert look_for_wording("the photocopy r.png of the invoice") == "scan"


def test_bad_looks_fail_with_one_line_naming_the_field(worlds):
    world = worlds[WORLD]
    with pytest.raises(ValueError, match=r"documents\[0\] \(inv_hotel\): look: 'blurry' is not one of"):
        build_workspace(world, _spec("blurry"))
    with pytest.raises(ValueError, match=r"look.skew_deg: Input should be less than or equal to 5"):
        build_workspace(world, _spec({"kind": "scan", "skew_deg": 9}))
    with pytest.raises(ValueError, match=r"look.wobble: Extra inputs are not permitted"):
        build_workspace(world, _spec({"kind": "photo", "wobble": 1}))
    with pytest.raises(ValueError, match=r"documents\[0\] \(inv_hotel\).look: only png images have a look"):
        build_workspace(world, {"documents": [{"document": DOC, "format": "pdf", "look": "scan"}]})


def test_an_unset_look_is_the_clean_render(worlds, built):
    ws = build_workspace(worlds[WORLD], {"documents": [{"document": DOC, "format": "png", "name": "page.png"}]})
    assert ws.files["page.png"] == built["clean"][0]
    assert ws.manifest["page.png"].look["kind"] == "clean"


def test_deskew_finds_the_scans_tilt(built):
    """The tools' deskew_image levels a scan: the angle it finds undoes the recorded skew."""
    from guiforge.envs.tools.images import text_skew

    data, look = built["scan"]
    with Image.open(io.BytesIO(data)) as img:
        assert abs(text_skew(img) + look["skew_deg"]) < 0.15
    with Image.open(io.BytesIO(built["clean"][0])) as img:
        assert text_skew(img) == 0.0
