"""What bigger screens cost: ``python bench/viewports.py [--frames 20]``.

One web and one mobile instance (CSS-pixel phone frames, as the default pipeline takes
them) observe the mail inbox at every viewport guiforge.presentation draws from, light and
dark; each observation is a screenshot plus the element scan, the unit a teacher step
pays. Prints wall and process-tree CPU medians per viewport, the PNG size, and each size's
cost relative to the 1280x720 (web) and 412x839 (mobile) defaults, as one JSON object.
"""

from __future__ import annotations

import argparse
import json

from _timing import loadavg, samples, summary

from guiforge.envs.base import EnvSpec, TaskSpec
from guiforge.envs.web.mobile_env import MobileEnv
from guiforge.envs.web.sample_world import sample_world
from guiforge.envs.web.web_env import WebEnv
from guiforge.preparers.web_apps import web_setup
from guiforge.presentation import VIEWPORTS, theme_named


def run(domain: str, frames: int) -> dict[str, float]:
    world = sample_world()
    env = (WebEnv if domain == "web" else MobileEnv)(EnvSpec(domain=domain, screenshot_scale="css"))
    env.start()
    out: dict[str, float] = {}
    try:
        for width, height in VIEWPORTS[domain]:
            for theme in ("daylight", "midnight"):
                task = TaskSpec(task_id="bench", domain=domain, apps=["mail"], instruction="-",
                                setup=web_setup(world, apps=["mail"], start="/mail/inbox"),
                                presentation={"viewport": [width, height],
                                              "theme": theme_named(theme).model_dump()})
                env.reset(task)
                walls, cpus = samples(env.observe, frames)
                key = f"{domain}_{width}x{height}_{theme}"
                out.update(summary(walls, cpus, key))
                out[f"{key}_png_kb"] = round(len(env.observe().screenshot) / 1024, 1)
    finally:
        env.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20, help="observations timed per viewport and theme")
    args = parser.parse_args()
    figures: dict[str, float] = {"loadavg": loadavg()}
    for domain in ("web", "mobile"):
        figures.update(run(domain, args.frames))
    ratios = {}
    for domain, base in (("web", "1280x720"), ("mobile", "412x839")):
        for width, height in VIEWPORTS[domain]:
            for theme in ("daylight", "midnight"):
                key = f"{domain}_{width}x{height}_{theme}"
                ref = f"{domain}_{base}_daylight"
                ratios[f"{key}_cpu_vs_{base}"] = round(figures[f"{key}_cpu_s"] / figures[f"{ref}_cpu_s"], 2)
    print(json.dumps({"bench": "viewports", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
