"""Measure the web adapter: ``python -m guiforge.envs.web.bench [--resets 50]``.

Prints one JSON object (``{"bench", "figures", "ratios"}``, the shape of bench/*.py) with
start, reset (median of N), click/type step latency, screenshot PNG vs JPEG, all in seconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

from guiforge.envs.actions import Action
from guiforge.envs.base import EnvSpec, TaskSpec
from guiforge.envs.web.grounding import pointer
from guiforge.envs.web.sample_world import sample_world
from guiforge.envs.web.web_env import WebEnv
from guiforge.preparers.web_apps import web_setup


def _median(fn: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 4)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resets", type=int, default=50)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args(argv)
    task = TaskSpec(task_id="bench", domain="web", apps=["mail"], instruction="bench", setup=web_setup(sample_world(), start="mail"))
    env = WebEnv(EnvSpec(domain="web"))
    t0 = time.perf_counter()
    env.start()
    start_s = time.perf_counter() - t0
    try:
        obs = env.reset(task)
        reset_s = _median(lambda: env.reset(task), args.resets)
        seed = json.dumps({"apps": task.setup["apps"], "system": task.setup["system"], "start": "/mail/inbox"})
        load_only = _median(lambda: env.s.page.evaluate(
            "(t) => { const s = JSON.parse(t); return guiforge.loadState(s.apps, s.system, s.start, true); }", seed), args.resets)
        star = pointer(obs, "click", id="star-e-dan")  # toggles a star: a click that re-renders
        click_s = _median(lambda: env.step(star), args.steps)
        env.step(pointer(obs, "click", id="mail-search"))
        type_s = _median(lambda: env.step(Action(type="type", text="invoice")), args.steps)
        observe_s = _median(env.observe, args.steps)
        png_s = _median(env.screenshot, args.steps)
        pw_png_s = _median(lambda: env.s.page.screenshot(type="png"), args.steps)
        env.image_format = "jpeg"
        jpeg_s = _median(env.screenshot, args.steps)
        elements_s = _median(lambda: env.s.page.evaluate("() => guiforge.elements()"), args.steps)
    finally:
        env.close()
    figures = {"start_s": round(start_s, 3), "reset_median_s": reset_s, "load_state_only_s": load_only,
               "step_click_median_s": click_s, "step_type_median_s": type_s, "observe_median_s": observe_s,
               "screenshot_png_s": png_s, "screenshot_jpeg_s": jpeg_s, "playwright_screenshot_png_s": pw_png_s, "elements_s": elements_s,
               "resets": args.resets}
    ratios = {"reset_vs_png_screenshot": round(reset_s / png_s, 2), "jpeg_vs_png": round(jpeg_s / png_s, 2),
              "cdp_vs_playwright_png": round(png_s / pw_png_s, 2)}
    print(json.dumps({"bench": "web_env", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
