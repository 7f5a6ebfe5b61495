"""How often tesseract reads a document image's total exactly, clean vs scan vs photo, and
what each look costs to make.

    .venv/bin/python bench/scans.py [--documents 40] [--seed 1] [--looks clean,scan,photo]
                                    [--save DIR]

Documents: every invoice and receipt with a total in template worlds over every scenario
(several locales), the first ``--documents`` of them. Each is rendered to a clean png, then
given each look (drawn from world, document and seed, as a task gets it), and read with the
file gate's OCR (tesseract, psm 3, one thread); "read" means the world's total fact is
stated in the OCR text in a form people write it (``worlds.consistency.quotes``, what the
file gate checks). ``--save DIR`` writes every image for a look at them.

Prints one JSON object as its last line: {"bench": "scans", "figures": {...}, "ratios": {...}}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from guiforge.preparers.file_image import png_text  # noqa: E402
from guiforge.preparers.file_scan import look_png  # noqa: E402
from guiforge.preparers.image_looks import resolve_look  # noqa: E402
from guiforge.skills.check import sample_worlds  # noqa: E402
from guiforge.worlds.consistency import quotes  # noqa: E402


def documents(n: int, seed: int) -> list[tuple]:
    """(world, document, total fact) for up to ``n`` one-page invoices and receipts."""
    out = []
    worlds = sample_worlds(max(10, n), seed=seed)  # about 1.4 such documents a world
    for world in worlds:
        facts = {f.source: f for f in world.facts}
        for doc in world.documents:
            fact = facts.get(f"doc:{doc.document_id}.total")
            if doc.kind in ("invoice", "receipt") and doc.total is not None and fact is not None:
                out.append((world, doc, fact))
    return out[:n]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--documents", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--looks", default="clean,scan,photo")
    ap.add_argument("--save", type=Path, default=None)
    args = ap.parse_args()
    looks = args.looks.split(",")
    docs = documents(args.documents, args.seed)
    read = {k: 0 for k in looks}
    make_ms = {k: 0.0 for k in looks}
    ocr_ms = {k: 0.0 for k in looks}
    misses: dict[str, list[str]] = {k: [] for k in looks}
    for i, (world, doc, fact) in enumerate(docs):
        for kind in looks:
            t0 = time.perf_counter()  # the render from the PDF counts: a look renders its own
            look = resolve_look(kind, [world.world_id, doc.document_id], seed=args.seed)
            data = look_png(world, doc, look)
            t1 = time.perf_counter()
            ok = quotes(png_text(data), fact)
            t2 = time.perf_counter()
            make_ms[kind] += (t1 - t0) * 1000
            ocr_ms[kind] += (t2 - t1) * 1000
            read[kind] += ok
            if not ok:
                misses[kind].append(f"{world.world_id}/{doc.document_id}")
            if args.save:
                args.save.mkdir(parents=True, exist_ok=True)
                (args.save / f"{i:02d}_{doc.document_id}_{kind}.png").write_bytes(data)
        print(f"{i + 1}/{len(docs)} {doc.document_id}: " + " ".join(
            f"{k}={read[k]}" for k in looks), file=sys.stderr)
    n = len(docs)
    figures = {
        "documents": n,
        "read_rate": {k: round(read[k] / n, 3) for k in looks},
        "make_ms_per_image": {k: round(make_ms[k] / n, 1) for k in looks},
        "ocr_ms_per_image": {k: round(ocr_ms[k] / n, 1) for k in looks},
        "misses": misses,
        "loadavg_1m": os.getloadavg()[0],
    }
    ratios = {f"read_{k}_vs_clean": round(read[k] / read["clean"], 3)
              for k in looks if k != "clean" and "clean" in looks and read["clean"]}
    print(json.dumps({"bench": "scans", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
