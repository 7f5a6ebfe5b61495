"""How the web apps cope with dense worlds: reset (seed + screenshot + element scan) and a
wheel scroll, per app, for one world built with its everyday life (dense) and without it
(bare), in the same browser. ``--rounds`` resets per app and world (default 3).

    python bench/world_apps.py [--apps mail,calendar,...] [--rounds 3] [--mobile]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from guiforge.envs.actions import Action
from guiforge.envs.apps import app_info
from guiforge.envs.base import EnvSpec, TaskSpec
from guiforge.envs.web.mobile_env import MobileEnv
from guiforge.envs.web.web_env import WebEnv
from guiforge.preparers.web_apps import web_setup
from guiforge.worlds import build_personas, build_world, load_scenarios, suitable_scenarios


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--apps", default="mail,calendar,contacts,bank,shop,travel")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mobile", action="store_true")
    args = ap.parse_args()
    persona = build_personas(1, seed=7)[0]
    scenario = suitable_scenarios(persona, load_scenarios())[0]
    worlds = {"dense": build_world(persona, scenario, seed=1),
              "bare": build_world(persona, scenario, seed=1, background=False)}
    domain = "mobile" if args.mobile else "web"
    env = (MobileEnv if args.mobile else WebEnv)(EnvSpec(domain=domain))
    env.start()
    figures: dict[str, float] = {}
    try:
        for app in args.apps.split(","):
            for label, world in worlds.items():
                task = TaskSpec(task_id=f"bench-{app}", domain=domain, apps=[app], instruction="look",
                                setup=web_setup(world, start=app_info(app).home))
                resets, scrolls, elements = [], [], 0
                for _ in range(args.rounds):
                    t = time.perf_counter()
                    obs = env.reset(task)
                    resets.append(time.perf_counter() - t)
                    elements = len(obs.debug["elements"])
                    t = time.perf_counter()
                    if args.mobile:
                        env.step(Action(type="swipe", x=500, y=750, x2=500, y2=350))
                    else:
                        env.step(Action(type="scroll", x=500, y=600, direction="down", amount=3))
                    scrolls.append(time.perf_counter() - t)
                figures[f"{app}_{label}_reset_s"] = round(statistics.median(resets), 3)
                figures[f"{app}_{label}_scroll_s"] = round(statistics.median(scrolls), 3)
                figures[f"{app}_{label}_elements"] = elements
    finally:
        env.close()
    ratios = {}
    for app in args.apps.split(","):
        for what in ("reset", "scroll"):
            bare = figures[f"{app}_bare_{what}_s"]
            ratios[f"{app}_{what}_dense_over_bare"] = round(figures[f"{app}_dense_{what}_s"] / bare, 2) if bare else None
    print(json.dumps({"bench": "world_apps", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
