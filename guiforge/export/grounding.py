"""The grounding export: the run's ``grounding`` rows as the files grounding trainers and
benchmarks read.

Layout::

    screenspot/images/<sha256>.png                ScreenSpot-style: the screenshots by hash
    screenspot/screenspot_<domain>.json           [{img_filename, bbox [x, y, w, h] in pixels,
                                                    instruction, data_type (text | icon),
                                                    data_source (the app), platform, split}]
    screenspot/refusals_<domain>.json             the same records for refusal rows, bbox null
    grounding/<domain>/<split>-NNNNN.parquet      TRL conversational rows: the screenshot and
                                                  the expression, the centre point as the target
    README.md                                     the card: a config per domain and one for all

The TRL target is the centre ``(x, y)`` in the export's coordinate convention (``--coords``:
grid999 by default, the lake's own; pixels are the frame's), or ``not on screen`` for a
refusal. ``bbox`` stays in screenshot pixels in every file (``[x, y, width, height]``, as
ScreenSpot writes it). Splits follow the SFT export's (by world).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from datasets import Features, Image, List, Value

from guiforge.errors import GuiforgeError
from guiforge.export.hf import MESSAGES
from guiforge.export.run import ExportResult, _fresh_folder
from guiforge.export.select import SPLITS, assign_splits, split_group
from guiforge.export.source import pick_run, read_images
from guiforge.harness.formats import coord_system
from guiforge.lake.fingerprint import fingerprint
from guiforge.lake.store import Lake

REFUSAL = "not on screen"
ROWS_PER_FILE = 512
COLUMNS = ("grounding_id", "instruction", "expression_kind", "data_type", "refusal", "near_miss", "small_target",
           "dense_screen", "domain", "app", "theme", "bbox", "point", "image_width", "image_height", "image_sha256",
           "task_id", "world_id", "split")


CONVENTIONS = {"grid999": "on a 0-999 grid over the screenshot", "grid1000": "on a 0-1000 grid over the screenshot",
               "unit": "as fractions (0-1) of the screenshot's width and height",
               "pixels": "in the screenshot's pixels"}


def prompt(instruction: str, coords: str) -> str:
    """The user turn's text: the expression and how to answer."""
    return (f"Where on this screen is the target of: {instruction}\n"
            f"Answer with its centre as (x, y) {CONVENTIONS[coords]}, or “{REFUSAL}” if the screen does not show it.")


def point_in(row: dict[str, Any], coords: str) -> list[float | int] | None:
    """The row's centre in ``coords`` (pixels: the frame's own, exactly; others from the
    lake's grid point)."""
    if row["refusal"]:
        return None
    if coords == "pixels":
        return [row["point_x"], row["point_y"]]
    system = coord_system(coords, (row["image_width"], row["image_height"]))
    return list(system.to_model(row["grid_x"], row["grid_y"]))


def export_grounding(lake: Lake, out: Path, run_id: str | None = None, coords: str = "grid999",
                     validation: float = 0.05, test: float = 0.05) -> ExportResult:
    """Write the grounding export of a run into ``out`` (see the module); the result's
    ``exports`` rows are committed by ``commit_export``, its figures say what was written."""
    if coords not in CONVENTIONS:
        usable = ", ".join(CONVENTIONS)
        raise GuiforgeError(f"--coords: {coords!r} is not a convention the grounding export writes; use one of {usable}")
    started = time.perf_counter()
    run = pick_run(lake, run_id, "grounding", "grounding rows", "run a pipeline with the grounding stage")
    rows = lake.read_table("grounding", run_id=run).to_pylist()
    # a screen's rows together: a file stores each screenshot once (dictionary-encoded)
    rows.sort(key=lambda r: (r["image_sha256"], r["grounding_id"]))
    images = read_images(lake, {r["image_sha256"] for r in rows})
    missing = {r["image_sha256"] for r in rows} - set(images)
    if missing:
        raise GuiforgeError(f"{lake.root}: images: {len(missing)} screenshot(s) the grounding rows name are not in "
                            f"the images table (e.g. {sorted(missing)[0]}): run `guiforge lake check`")
    split_of = assign_splits([split_group(r) for r in rows], validation, test)
    for r in rows:
        r["split"] = split_of.get(split_group(r), "train")
        r["point"] = point_in(r, coords)
    _fresh_folder(out)
    written = _write_screenspot(out / "screenspot", rows, images)
    counts = _write_trl(out / "grounding", rows, images, coords)
    _write_card(out, run, coords, counts)
    seconds = time.perf_counter() - started
    figures = {"rows": len(rows), "refusals": sum(r["refusal"] for r in rows),
               "by_domain": dict(Counter(r["domain"] for r in rows)), "screenspot_files": written,
               "images": len(images), "seconds": round(seconds, 3),
               "rows_per_s": round(len(rows) / max(seconds, 1e-9), 1)}
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    exports = [{"export_id": "exp_" + fingerprint([run, str(out), kind, coords, created], 14), "kind": kind,
                "path": str(out), "n_rows": n, "format": fmt, "coords": coords, "source_run": run,
                "created_at": created, "details_json": json.dumps({"figures": figures})}
               for kind, fmt, n in (("grounding", "trl", len(rows)),
                                    ("grounding_screenspot", "screenspot", len(rows) - figures["refusals"]))]
    return ExportResult(run, out, "grounding", coords, len(rows), 0, "grounding", figures, exports=exports)


def _write_screenspot(folder: Path, rows: list[dict[str, Any]], images: dict[str, dict[str, Any]]) -> list[str]:
    (folder / "images").mkdir(parents=True, exist_ok=True)
    names = {}
    for sha, img in images.items():
        names[sha] = f"{sha}.{img.get('format') or 'png'}"
        (folder / "images" / names[sha]).write_bytes(img["data"])
    files: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        record = {"img_filename": names[r["image_sha256"]], "bbox": r["bbox"], "instruction": r["instruction"],
                  "data_type": r["data_type"], "data_source": r["app"], "platform": r["domain"], "split": r["split"],
                  "expression_kind": r["expression_kind"], "id": r["grounding_id"]}
        name = f"{'refusals' if r['refusal'] else 'screenspot'}_{r['domain']}.json"
        files.setdefault(name, []).append(record)
    for name, records in files.items():
        lines = ",\n".join(json.dumps(r, ensure_ascii=False) for r in records)  # a record a line
        (folder / name).write_text(f"[\n{lines}\n]\n")
    return sorted(files)


def features():
    """The TRL rows' ``datasets.Features``: messages, images, then the row's columns."""
    types: dict[str, Any] = {c: Value("string") for c in COLUMNS}
    types.update({"refusal": Value("bool"), "near_miss": Value("bool"), "small_target": Value("bool"),
                  "dense_screen": Value("bool"), "bbox": List(Value("int32")), "point": List(Value("float64")),
                  "image_width": Value("int32"), "image_height": Value("int32")})
    return Features({"messages": MESSAGES, "images": List(Image()), **types})


def _write_trl(folder: Path, rows: list[dict[str, Any]], images: dict[str, dict[str, Any]],
               coords: str) -> dict[tuple[str, str], int]:
    schema = features().arrow_schema
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["domain"], r["split"]), []).append(r)
    for (domain, split), part in sorted(groups.items()):
        (folder / domain).mkdir(parents=True, exist_ok=True)
        for n, start in enumerate(range(0, len(part), ROWS_PER_FILE)):
            chunk = part[start:start + ROWS_PER_FILE]
            table = pa.Table.from_pylist([_record(r, images, coords) for r in chunk], schema=schema)
            pq.write_table(table, folder / domain / f"{split}-{n:05d}.parquet", row_group_size=len(chunk),
                           compression="zstd", use_dictionary=True, dictionary_pagesize_limit=1 << 30)
    return {k: len(v) for k, v in groups.items()}


def _record(r: dict[str, Any], images: dict[str, dict[str, Any]], coords: str) -> dict[str, Any]:
    img = images[r["image_sha256"]]
    point = r["point"]
    answer = REFUSAL if point is None else f"({_num(point[0])}, {_num(point[1])})"
    messages = [{"role": "user", "content": [{"type": "image", "text": None},
                                             {"type": "text", "text": prompt(r["instruction"], coords)}]},
                {"role": "assistant", "content": [{"type": "text", "text": answer}]}]
    frame = {"bytes": img["data"], "path": f"{r['image_sha256']}.{img.get('format') or 'png'}"}
    return {"messages": messages, "images": [frame],
            **{c: (None if point is None else [float(v) for v in point]) if c == "point" else r.get(c)
               for c in COLUMNS}}


def _num(v: float | int) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.4f}".rstrip("0")


def _write_card(out: Path, run: str, coords: str, counts: dict[tuple[str, str], int]) -> None:
    configs = []
    domains = sorted({d for d, _ in counts})
    for name, pattern in [*((f"grounding_{d}", f"grounding/{d}/{{split}}-*.parquet") for d in domains),
                          ("grounding", "grounding/*/{split}-*.parquet")]:
        splits = [s for s in SPLITS if any(n for (d, sp), n in counts.items() if sp == s and
                                           (name == "grounding" or name == f"grounding_{d}"))]
        configs.append({"config_name": name, "data_files": [{"split": s, "path": pattern.format(split=s)}
                                                            for s in splits]})
    table = "\n".join(f"| {d} | {s} | {n} |" for (d, s), n in sorted(counts.items()))
    head = yaml.safe_dump({"configs": configs, "task_categories": ["image-text-to-text"],
                           "tags": ["gui-grounding", "computer-use", "guiforge"]}, sort_keys=False)
    (out / "README.md").write_text(
        f"---\n{head}---\n\n# Grounding data of guiforge run {run}\n\n"
        "Screens guiforge rendered (its web and mobile apps across themes, viewports and distractors; LibreOffice "
        "documents and menus on the desktop); one row per "
        "referring expression of an element (its text, its role and position, what it does, a user's request), "
        "and refusal rows naming an element the screen does not show. Every box was hit-tested when it was "
        "rendered: on a page the element was visible and `document.elementFromPoint` at the box's centre returned "
        "it or a descendant; on the desktop the box's text read the same twice, was a LibreOffice label or the "
        "document's, and X's pointer query at its centre and corners found its window.\n\n"
        f"- `messages` / `images`: TRL conversational rows; the target is the centre `(x, y)` in `{coords}` "
        f"coordinates, or “{REFUSAL}”.\n"
        "- `bbox`: `[x, y, width, height]` in screenshot pixels; `point`: the target as a pair.\n"
        "- `screenspot/`: the same rows as ScreenSpot-style JSON (`img_filename`, `bbox`, `instruction`, "
        "`data_type`, `data_source`, `platform`), refusals in their own files.\n\n"
        "| domain | split | rows |\n| --- | --- | --- |\n" + table + "\n")
