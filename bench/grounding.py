"""What the grounding factory yields and what it costs: rows per second from real Chromium
screens, and the share of rendered boxes that fail the hit test (never emitted).

    .venv/bin/python bench/grounding.py [--apps mail,shop,calendar,contacts] [--screens 4]
                                        [--distractors 0.35] [--seed 7]

For each app and each of web and mobile, the sample world's state is rendered the way the
grounding stage renders a task (``--screens`` looks: the app's start, then screens one press
away, a distractor on ``--distractors`` of the pressed ones) in one warm instance per domain,
and turned into rows. Figures: screens, rows, refusals, rows per second (render + scan +
rows, the browser's start left out), the share of boxes that fail the hit test (occluded or
hidden, over every box that shows), per domain too. Ratios, same run: the scan's time over
the whole screen's (reset, press, capture, scan), and the rows' time over the screen's.

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
from guiforge.envs.kinds_builtin import MOBILE, WEB  # noqa: E402
from guiforge.envs.web.grounding_scan import grounding_scan  # noqa: E402
from guiforge.envs.web.sample_world import sample_world  # noqa: E402
from guiforge.grounding.expressions import role_word  # noqa: E402
from guiforge.grounding.rows import counts, refusal_pool, screen_rows  # noqa: E402
from guiforge.grounding.screens import render_task  # noqa: E402
from guiforge.preparers.web_apps import web_setup  # noqa: E402
from guiforge.worlds.apps import app_info  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--apps", default="mail,shop,calendar,contacts")
    ap.add_argument("--screens", type=int, default=4)
    ap.add_argument("--distractors", type=float, default=0.35)
    ap.add_argument("--seed", default="7")
    args = ap.parse_args()
    world = sample_world()
    figures: dict = {"apps": args.apps.split(","), "screens_per_task": args.screens}
    totals = {"screens": 0, "rows": 0, "refusals": 0, "render_s": 0.0, "scan_s": 0.0, "rows_s": 0.0,
              "ok": 0, "failing": 0}
    for kind in (WEB, MOBILE):
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
    figures.update({"screens": totals["screens"], "rows": totals["rows"], "refusals": totals["refusals"],
                    "rows_per_screen": round(totals["rows"] / max(totals["screens"], 1), 1),
                    "rows_per_s": round(totals["rows"] / (totals["render_s"] + totals["rows_s"]), 1),
                    "screen_s": round(totals["render_s"] / max(totals["screens"], 1), 4),
                    "hit_test_failing_share": round(totals["failing"] / max(totals["ok"] + totals["failing"], 1), 4)})
    ratios = {"scan_over_screen": round(totals["scan_s"] / totals["render_s"], 4),
              "rows_over_screen": round(totals["rows_s"] / totals["render_s"], 4)}
    print(json.dumps({"bench": "grounding", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
