"""What the mouse style costs per desktop package gate: each desktop GUI card's instance is
gated in real LibreOffice with its reference in the keyboard style and in the mouse style
(menus and dialogs found by OCR), on each LibreOffice look and screen size.

    .venv/bin/python bench/desktop_styles.py                 # --quick: 2 cards, one look
    .venv/bin/python bench/desktop_styles.py --cards sort_rows replace_name --looks all

Prints one line per gate, then one JSON object {"bench", "figures", "ratios"}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOOKS = [("office-light", (1280, 720)), ("office-compact", (1366, 768)), ("office-sepia", (1920, 1080))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", nargs="*", default=["calc.sort_rows", "writer.replace_name"],
                        help="card ids (app.skill) to gate")
    parser.add_argument("--looks", choices=["one", "rotate", "all"], default="one",
                        help="one: the first look for every card; rotate: card i gets look i mod 3; all: every look")
    parser.add_argument("--worlds", type=int, default=6)
    args = parser.parse_args(argv)

    from guiforge.envs import EnvManager, default_factories
    from guiforge.gates.package_gate import PackageGate
    from guiforge.presentation import theme_named
    from guiforge.skills.check import load_selected, sample_worlds
    from guiforge.skills.instantiate import instantiate
    from guiforge.tasks.candidates import candidate_row
    from guiforge.tasks.materialize import task_spec

    cards = load_selected(ROOT / "skills", args.cards)
    worlds = sample_worlds(args.worlds)
    def looks_for(i: int) -> list:
        return LOOKS if args.looks == "all" else [LOOKS[i % 3]] if args.looks == "rotate" else LOOKS[:1]
    manager = EnvManager(default_factories(), max_instances=1)
    seconds: dict[str, list[float]] = {"keyboard": [], "mouse": []}
    actions: dict[str, list[int]] = {"keyboard": [], "mouse": []}
    failures = 0
    failed: list[str] = []
    try:
        for i, card in enumerate(cards):
            instance = next(((c, w) for w in worlds for c in instantiate(card, w, 1) if c.variant != "terminal"), None)
            if instance is None:
                print(f"{card.id}: binds on none of {len(worlds)} worlds", file=sys.stderr)
                continue
            c, world = instance
            for theme, size in looks_for(i):
                for style in ("keyboard", "mouse"):
                    c.presentation = {"theme": theme_named(theme).model_dump(), "viewport": list(size), "style": style}
                    row = candidate_row(c)
                    started = time.perf_counter()
                    verdict = PackageGate(manager).check(task_spec(row, world), json.loads(row["reference_json"]),
                                                         c.variant)
                    took = time.perf_counter() - started
                    print(f"{card.id} {theme} {size[0]}x{size[1]} {style}: "
                          f"{'pass' if verdict.passed else 'FAIL ' + verdict.reason} ({took:.1f} s, "
                          f"{verdict.details.get('actions')} actions)", file=sys.stderr, flush=True)
                    if verdict.passed:
                        seconds[style].append(verdict.details["seconds"])
                        actions[style].append(verdict.details["actions"])
                    else:
                        failures += 1
                        failed.append(f"{card.id} {theme} {style}: {verdict.reason[:200]}")
    finally:
        manager.close()
    figures = {f"{style}_gate_s_median": round(statistics.median(v), 2) for style, v in seconds.items() if v}
    figures.update({f"{style}_actions_mean": round(statistics.mean(v), 1) for style, v in actions.items() if v})
    figures["loadavg_1m"] = round(os.getloadavg()[0], 2)
    figures["gates"] = sum(len(v) for v in seconds.values()) + failures
    figures["failures"] = failures
    from guiforge.teacher.desktop_steps import FALLBACKS

    figures["mouse_fallbacks_to_keyboard"] = dict(FALLBACKS)  # a label OCR could not find
    for line in failed:
        print("FAILED", line, file=sys.stderr)
    ratios = {}
    if seconds["keyboard"] and seconds["mouse"]:
        ratios["mouse_over_keyboard_gate_s"] = round(statistics.median(seconds["mouse"]) /
                                                     statistics.median(seconds["keyboard"]), 2)
    print(json.dumps({"bench": "desktop_styles", "figures": figures, "ratios": ratios}))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
