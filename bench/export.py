"""Export throughput and what an SFT step costs on disk, against the raw lake.

    python bench/export.py [--lake data/lake] [--run-id ID] [--repeats 2]

With no --lake it first builds a small lake (4 personas, one web/mobile card, 2 tasks x 4
scripted-teacher samples in real Chromium, about a minute), so the bench runs anywhere.

Figures, per format (hf = Parquet SFT + prompt-completion + RL + card; llamafactory =
sharegpt JSON + image files): rows/s over the whole export (lake read, prompt rebuild,
coordinate conversion, image lookup, writing), best of --repeats. Bytes: the hf SFT folder
per step, the raw lake's steps + images of the run per step, and the same SFT rows written
with every row's images embedded plainly (no dictionary encoding), which is what one image
per row that shows it would cost. The last line is one JSON object
``{"bench": "export", "figures": {...}, "ratios": {...}}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from guiforge.export import export_run
from guiforge.lake import Lake


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def small_lake(root: Path) -> Lake:
    from guiforge.orchestration.compile import build_pipeline
    from guiforge.orchestration.runner import run_pipeline

    cfg = {"name": "bench-export", "seed": 4, "workers": 2,
           "models": {"world_builder": {"provider": "offline"}, "teacher": {"provider": "offline"}},
           "stages": {"personas": {"count": 4, "shard_size": 2}, "worlds": {},
                      "skills": {"include": ["mail.reply_invoice_total"]}, "task_candidates": {"per_world": 2},
                      "task_gates": {"concurrency": 2},
                      "rollouts": {"samples": 4, "tasks": 2, "tasks_per_shard": 2, "concurrency": 2,
                                   "phone_screenshots": "css"}}}
    run_pipeline(build_pipeline(cfg, "bench.yaml", lake=str(root)), executor="local")
    return Lake(root)


def plain_bytes(sft_folder: Path, scratch: Path) -> int:
    """The SFT files rewritten without dictionary encoding: every row's images in full."""
    total = 0
    for n, path in enumerate(sorted(sft_folder.rglob("*.parquet"))):
        out = scratch / f"plain-{n}.parquet"
        pq.write_table(pq.read_table(path), out, compression="zstd", use_dictionary=False)
        total += out.stat().st_size
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lake", help="an existing lake (default: build a small one)")
    ap.add_argument("--run-id")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        tmp_path = Path(tmp)
        if args.lake:
            lake = Lake(args.lake)
        else:
            log("building a small lake (scripted teacher, real Chromium)...")
            t0 = time.perf_counter()
            lake = small_lake(tmp_path / "lake")
            log(f"  built in {time.perf_counter() - t0:.1f}s")
        figures: dict = {}
        results = {}
        for fmt in ("hf", "llamafactory"):
            best = None
            for i in range(args.repeats):
                out = tmp_path / f"{fmt}-{i}"
                t0 = time.perf_counter()
                result = export_run(lake, out, run_id=args.run_id, fmt=fmt)
                seconds = time.perf_counter() - t0
                best = seconds if best is None else min(best, seconds)
                results[fmt] = (result, out)
            rows = results[fmt][0].n_sft + results[fmt][0].n_rl
            figures[f"{fmt}_rows"] = rows
            figures[f"{fmt}_seconds"] = round(best, 3)
            figures[f"{fmt}_rows_per_s"] = round(rows / best, 1)
            log(f"{fmt}: {rows} rows in {best:.2f}s")
        hf, hf_out = results["hf"]
        n_sft = max(hf.n_sft, 1)
        figures["sft_rows"] = hf.n_sft
        shown = [len(v) for p in (hf_out / "sft").rglob("*.parquet")
                 for v in pq.read_table(p, columns=["image_sha256"]).column("image_sha256").to_pylist()]
        figures["images_per_sft_row"] = round(sum(shown) / max(len(shown), 1), 2)
        figures["sft_bytes_per_step"] = hf.figures["sft_bytes_per_step"]
        figures["raw_lake_bytes_per_step"] = hf.figures["raw_bytes_per_step"]
        figures["sft_plain_bytes_per_step"] = round(plain_bytes(hf_out / "sft", tmp_path) / n_sft)
        details = json.loads(hf.exports[0]["details_json"])
        figures["excluded"] = details["figures"]["excluded"]
        figures["loadavg_1m"] = round(os.getloadavg()[0], 2)
    ratios = {
        "sft_bytes_per_step_vs_raw_lake": round(figures["sft_bytes_per_step"] / figures["raw_lake_bytes_per_step"], 3),
        "sft_bytes_dictionary_vs_plain": round(figures["sft_bytes_per_step"] / figures["sft_plain_bytes_per_step"], 3),
    }
    print(json.dumps({"bench": "export", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
