"""What the grounding factory yields and what it costs: rows per second from real Chromium
and LibreOffice screens, and the share of boxes that fail their checks (never emitted).

    .venv/bin/python bench/grounding.py [--apps mail,shop,calendar,contacts] [--screens 4]
                                        [--distractors 0.35] [--seed 7]
                                        [--domains web,mobile,desktop] [--cell-clicks 8]

For each app and each of web and mobile, the sample world's state is rendered the way the
grounding stage renders a task (``--screens`` looks: the app's start, then screens one press
away, a distractor on ``--distractors`` of the pressed ones) in one warm instance per domain,
and turned into rows. Figures: screens, rows, refusals, rows per second (render + scan +
rows, the browser's start left out), the share of boxes that fail the hit test (occluded or
hidden, over every box that shows), per domain too. Ratios, same run: the scan's time over
the whole screen's (reset, press, capture, scan), and the rows' time over the screen's.

Desktop: the sample world's workbook (Calc), deck (Impress) and notes (Writer) opened as a
task opens them, ``--screens`` screens each (the document, then menus dropped) in one warm
LibreOffice; its figures also split the failures: ``misread_share`` (the OCR box read
differently the second time, or words neither LibreOffice nor the document has) and
``hit_test_failing_share`` (X's pointer query or Calc's click found something else),
``screen_s`` per screen (the first of a document includes its reset and cell clicks).

Prints one JSON object as its last line: {"bench": "grounding", "figures": {...}, "ratios": {...}}.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from guiforge.envs import EnvManager  # noqa: E402
from guiforge.envs.base import TaskSpec  # noqa: E402
from guiforge.envs.kinds_builtin import DESKTOP, MOBILE, WEB  # noqa: E402
from guiforge.envs.web.grounding_scan import grounding_scan  # noqa: E402
from guiforge.envs.web.sample_world import sample_world  # noqa: E402
from guiforge.grounding.desktop import refusal_pools, render_desktop_task  # noqa: E402
from guiforge.grounding.expressions import role_word  # noqa: E402
from guiforge.grounding.rows import counts, refusal_pool, screen_rows  # noqa: E402
from guiforge.grounding.screens import render_task  # noqa: E402
from guiforge.preparers.files import build_workspace  # noqa: E402
from guiforge.preparers.web_apps import web_setup  # noqa: E402
from guiforge.worlds.apps import app_info  # noqa: E402

DESKTOP_DOCUMENTS = {".xlsx": "calc", ".pptx": "impress", ".txt": "writer"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--apps", default="mail,shop,calendar,contacts")
    ap.add_argument("--screens", type=int, default=4)
    ap.add_argument("--distractors", type=float, default=0.35)
    ap.add_argument("--seed", default="7")
    ap.add_argument("--domains", default="web,mobile,desktop")
    ap.add_argument("--cell-clicks", type=int, default=8)
    args = ap.parse_args()
    world = sample_world()
    figures: dict = {"apps": args.apps.split(","), "screens_per_task": args.screens}
    totals = {"screens": 0, "rows": 0, "refusals": 0, "render_s": 0.0, "scan_s": 0.0, "rows_s": 0.0,
              "ok": 0, "failing": 0}
    domains = args.domains.split(",")
    for kind in (k for k in (WEB, MOBILE) if k.domain in domains):
        spec = kind.spec(phone_screenshots="css")
        with EnvManager({kind.domain: kind.make}, max_instances=1) as manager, manager.acquire(spec) as lease:
            screens, render_s = [], 0.0
            for app in figures["apps"]:
                task = TaskSpec(task_id=f"bench-{app}", domain=kind.domain, apps=[app], instruction="look",
                                setup=web_setup(world, start=app_info(app).home), world_id=world.world_id)
                t = time.perf_counter()
                screens += render_task(lease, task, args.screens, args.seed, args.distractors, kind.touch, role_word)
                render_s += time.perf_counter() - t
            t = time.perf_counter()
            for _ in range(10):  # the scan alone, on the last screen, for its share of a screen's time
                grounding_scan(lease.env)
            scan_s = (time.perf_counter() - t) / 10 * len(screens)
        t = time.perf_counter()
        pool = refusal_pool(screens)
        rows = [r for s in screens for r in screen_rows(s, pool, 3, kind.touch, args.seed)]
        rows_s = time.perf_counter() - t
        tallies = [counts(s) for s in screens]
        ok = sum(c["n_ok"] for c in tallies)
        failing = sum(c["n_occluded"] + c["n_hidden"] for c in tallies)
        figures[kind.domain] = {"screens": len(screens), "rows": len(rows), "refusals": sum(r["refusal"] for r in rows),
                                "rows_per_s": round(len(rows) / (render_s + rows_s), 1),
                                "hit_test_failing_share": round(failing / max(ok + failing, 1), 4)}
        for key, value in (("screens", len(screens)), ("rows", len(rows)),
                           ("refusals", figures[kind.domain]["refusals"]), ("render_s", render_s),
                           ("scan_s", scan_s), ("rows_s", rows_s), ("ok", ok), ("failing", failing)):
            totals[key] += value
    if "desktop" in domains:
        figures["desktop"] = desktop(world, args)
    if not totals["screens"]:
        print(json.dumps({"bench": "grounding", "figures": figures, "ratios": {}}))
        return
    figures.update({"screens": totals["screens"], "rows": totals["rows"], "refusals": totals["refusals"],
                    "rows_per_screen": round(totals["rows"] / max(totals["screens"], 1), 1),
                    "rows_per_s": round(totals["rows"] / (totals["render_s"] + totals["rows_s"]), 1),
                    "screen_s": round(totals["render_s"] / max(totals["screens"], 1), 4),
                    "hit_test_failing_share": round(totals["failing"] / max(totals["ok"] + totals["failing"], 1), 4)})
    ratios = {"scan_over_screen": round(totals["scan_s"] / totals["render_s"], 4),
              "rows_over_screen": round(totals["rows_s"] / totals["render_s"], 4)}
    print(json.dumps({"bench": "grounding", "figures": figures, "ratios": ratios}))


def desktop(world, args) -> dict:
    """The desktop's figures (see the module): the sample world's documents in LibreOffice."""
    files = build_workspace(world, {"documents": "all"}).files
    opened = [(name, app) for name in sorted(files) for suffix, app in DESKTOP_DOCUMENTS.items()
              if name.endswith(suffix)]
    screens, per_app, render_s = [], {}, 0.0
    with EnvManager({"desktop": DESKTOP.make}, max_instances=1) as manager, \
            manager.acquire(DESKTOP.spec("gui")) as lease:
        for name, app in opened:
            task = TaskSpec(task_id=f"bench-{app}", domain="desktop", apps=[app], instruction="look",
                            setup={"files": files, "open": name}, world_id=world.world_id)
            t = time.perf_counter()
            mine = render_desktop_task(lease, task, args.screens, args.seed, args.cell_clicks)
            spent = time.perf_counter() - t
            render_s += spent
            screens += mine
            per_app[app] = {"screens": len(mine), "screen_s": round(spent / max(len(mine), 1), 3)}
    t = time.perf_counter()
    pools = refusal_pools(screens)
    rows = [r for s in screens for r in screen_rows(s, pools[s.screen_id], 3, False, args.seed)]
    rows_s = time.perf_counter() - t
    tallies = [counts(s) for s in screens]
    ok = sum(c["n_ok"] for c in tallies)
    misread = sum(c["n_hidden"] for c in tallies)
    missed = sum(c["n_occluded"] for c in tallies)
    checked = max(ok + misread + missed, 1)
    return {"screens": len(screens), "rows": len(rows), "refusals": sum(r["refusal"] for r in rows),
            "rows_per_s": round(len(rows) / (render_s + rows_s), 1),
            "screen_s": round(render_s / max(len(screens), 1), 3), "boxes_ok": ok,
            "misread_share": round(misread / checked, 4), "hit_test_failing_share": round(missed / checked, 4),
            "failing_share": round((misread + missed) / checked, 4), "apps": per_app}


if __name__ == "__main__":
    main()
