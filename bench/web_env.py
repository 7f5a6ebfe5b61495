"""Where a web reset's time goes: ``python bench/web_env.py [--resets 50]``.

Breaks the reset into its parts (state load, element scan, screenshot as PNG and JPEG, CDP
vs Playwright capture; a reset sends the scan and the capture together) and prints one
JSON object ``{"bench", "figures", "ratios"}``; wall medians plus CPU seconds of the whole process tree
per call (the stable figure on a loaded machine). The page runs on Chromium's own frame
clock (``GUIFORGE_BEGIN_FRAMES=0``) so that Playwright's ``page.screenshot`` can be timed next
to the CDP capture; ``bench/envs.py`` times the default, frames drawn on demand.
"""

from __future__ import annotations

import argparse
import json
import os

from _timing import loadavg, measure, samples, summary

from guiforge.envs.actions import Action
from guiforge.envs.base import EnvSpec, TaskSpec
from guiforge.envs.web.grounding import pointer
from guiforge.envs.web.page_env import _INSPECT, _LOAD, _js_call
from guiforge.envs.web.sample_world import sample_world
from guiforge.envs.web.web_env import WebEnv
from guiforge.preparers.web_apps import web_setup


def transport(task: TaskSpec, n: int, blocks: int = 10) -> dict[str, float]:
    """A reset's CDP calls over the env's own channel vs relayed by Playwright's driver."""
    env = WebEnv(EnvSpec(domain="web"))
    env.start()
    try:
        if env.frames is None or env.frames.name != "begin_frame":
            return {}
        env.reset(task)
        seed = json.dumps({"apps": task.setup["apps"], "system": task.setup["system"], "start": "/mail/inbox"})
        calls = [_js_call(_LOAD, (seed,), awaits=False), env.frames.capture_call(env.capture_params()),
                 _js_call(_INSPECT, ()), ("Page.resetNavigationHistory", {})]
        relay = env.s.context.new_cdp_session(env.s.page)
        sides = {"own_channel": env.s.cdp.send, "relayed": relay.send}
        walls: dict[str, list[float]] = {k: [] for k in sides}
        cpus: dict[str, list[float]] = {k: [] for k in sides}
        for _ in range(blocks):
            for name, send in sides.items():
                w, c = samples(lambda send=send: [send(*call) for call in calls], max(1, n // blocks))
                walls[name] += w
                cpus[name] += c
        relay.detach()
    finally:
        env.close()
    out: dict[str, float] = {}
    for name in sides:
        out |= summary(walls[name], cpus[name], f"transport_{name}")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resets", type=int, default=50)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args(argv)
    task = TaskSpec(task_id="bench", domain="web", apps=["mail"], instruction="bench",
                    setup=web_setup(sample_world(), start="mail"))
    figures_transport = transport(task, args.resets * 2)
    os.environ["GUIFORGE_BEGIN_FRAMES"] = "0"  # page.screenshot needs Chromium's own frame clock
    env = WebEnv(EnvSpec(domain="web"))
    env.start()
    figures: dict[str, float] = {"loadavg_1m": loadavg()}
    try:
        obs = env.reset(task)
        seed = json.dumps({"apps": task.setup["apps"], "system": task.setup["system"], "start": "/mail/inbox"})
        figures |= measure(lambda: env.reset(task), args.resets, "reset")
        figures |= measure(lambda: env.js_sync(_LOAD, seed), args.resets, "load")
        figures |= measure(lambda: env.js(_INSPECT), args.steps, "scan_cdp")
        figures |= measure(lambda: env.s.page.evaluate(_INSPECT), args.steps, "scan_playwright_evaluate")
        figures |= measure(env.screenshot, args.steps, "screenshot_png")
        figures |= measure(lambda: env.s.page.screenshot(type="png"), args.steps, "playwright_screenshot_png")
        figures |= measure(lambda: env.step(pointer(obs, "click", id="star-e-dan")), args.steps, "step_click")
        env.step(pointer(obs, "click", id="mail-search"))
        figures |= measure(lambda: env.step(Action(type="type", text="invoice")), args.steps, "step_type")
        env.image_format = "jpeg"
        figures |= measure(env.screenshot, args.steps, "screenshot_jpeg")
        figures |= measure(lambda: env.reset(task), args.resets, "reset_jpeg")
    finally:
        env.close()
    figures |= figures_transport
    figures["resets"] = args.resets
    figures["loadavg_1m_end"] = loadavg()
    ratios = {
        "screenshot_share_of_reset_cpu": round(figures["screenshot_png_cpu_s"] / figures["reset_cpu_s"], 2),
        "jpeg_vs_png_screenshot_cpu": round(figures["screenshot_jpeg_cpu_s"] / figures["screenshot_png_cpu_s"], 2),
        "cdp_vs_playwright_screenshot_cpu": round(figures["screenshot_png_cpu_s"] / figures["playwright_screenshot_png_cpu_s"], 2),
        "cdp_vs_playwright_scan_cpu": round(figures["scan_cdp_cpu_s"] / figures["scan_playwright_evaluate_cpu_s"], 2),
        "load_share_of_reset_cpu": round(figures["load_cpu_s"] / figures["reset_cpu_s"], 2),
    }
    if figures_transport:
        ratios["own_channel_vs_relayed_wall"] = round(
            figures["transport_own_channel_median_s"] / figures["transport_relayed_median_s"], 2)
        ratios["own_channel_vs_relayed_cpu"] = round(
            figures["transport_own_channel_cpu_s"] / figures["transport_relayed_cpu_s"], 2)
    print(json.dumps({"bench": "web_env", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
