"""World building speed: a template world built and checked, per scenario, against building
its persona alone (the same run, so the ratio holds on a loaded machine).

    .venv/bin/python bench/worlds.py [--seeds 6]

Prints one JSON object as its last line; the test suite asserts what a world holds, never
how long it took (tests/worlds/test_template_builder.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from guiforge.worlds.consistency import check_world
from guiforge.worlds.personas import build_personas
from guiforge.worlds.scenarios import load_scenarios
from guiforge.worlds.template_builder import build_world


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=6)
    args = parser.parse_args()
    scenarios = load_scenarios()
    personas = build_personas(args.seeds, seed=11)
    build = check = cpu = 0.0
    n = 0
    cpu0 = time.process_time()
    for sc in scenarios.values():
        for seed, persona in enumerate(personas):
            t0 = time.perf_counter()
            world = build_world(persona, sc, seed)
            t1 = time.perf_counter()
            check_world(world)
            build += t1 - t0
            check += time.perf_counter() - t1
            n += 1
    cpu = time.process_time() - cpu0
    t0 = time.perf_counter()
    build_personas(n, seed=12)
    persona_s = (time.perf_counter() - t0) / n
    figures = {"worlds": n, "ms_per_world_build": round(build / n * 1000, 2),
               "ms_per_world_check": round(check / n * 1000, 2), "cpu_ms_per_world": round(cpu / n * 1000, 2),
               "ms_per_persona": round(persona_s * 1000, 3), "loadavg_1m": os.getloadavg()[0]}
    ratios = {"check_over_build": round(check / build, 3), "world_over_persona": round(build / n / persona_s, 1)}
    print(json.dumps({"bench": "worlds", "figures": figures, "ratios": ratios}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
