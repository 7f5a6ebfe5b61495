"""BrowserGym's half of bench/envs.py. Runs inside BrowserGym's own venv (its Playwright is
pinned and older than ours) and must not import guiforge. It opens the same app page, served
on 127.0.0.1 by bench/envs.py, loads the same seed, and times BrowserGym's reset and a
coordinate click (``mouse_click``) on the same element. Prints one JSON line.

BrowserGym settings: the task's ``slow_mo`` is 0 (its base class defaults to 1000 ms per
Playwright call) and ``pre_observation_delay`` is 0 for the timed steps (its default 0.5 s
sleep is timed separately), so the comparison is against BrowserGym at its fastest.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

# bench/_timing is stdlib only: BrowserGym's venv can import it (this file's folder is on the path)
from _timing import measure
from browsergym.core.action.highlevel import HighLevelActionSet
from browsergym.core.env import BrowserEnv
from browsergym.core.task import AbstractBrowserTask

LOAD = "(t) => { const s = JSON.parse(t); return guiforge.loadState(s.apps, s.system, s.start, true); }"


class GuiforgePageTask(AbstractBrowserTask):
    def __init__(self, seed: int, url: str, seed_text: str, width: int, height: int):
        super().__init__(seed)
        self.url, self.seed_text = url, seed_text
        self.viewport = {"width": width, "height": height}
        self.slow_mo = 0
        self.timeout = 15000

    @classmethod
    def get_task_id(cls) -> str:
        return "guiforge.mail"

    def setup(self, page):
        page.goto(self.url, wait_until="load")
        page.evaluate(LOAD, self.seed_text)
        return "Star the email from Daniel", {}

    def validate(self, page, chat_messages):
        return 0.0, False, "", {}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--seed-file", type=Path, required=True)
    ap.add_argument("--click", required=True, help="x,y in CSS pixels")
    ap.add_argument("--viewport", default="1280x720")
    ap.add_argument("--resets", type=int, default=5)
    ap.add_argument("--steps", type=int, default=10)
    args = ap.parse_args()
    w, h = (int(v) for v in args.viewport.split("x"))
    x, y = (float(v) for v in args.click.split(","))
    env = BrowserEnv(task_entrypoint=GuiforgePageTask,
                     task_kwargs={"url": args.url, "seed_text": args.seed_file.read_text(), "width": w, "height": h},
                     headless=True, pre_observation_delay=0.0,
                     action_mapping=HighLevelActionSet(subsets=["coord"]).to_python_code)
    out: dict[str, float | str] = {}
    try:
        t0 = time.perf_counter()
        obs, _ = env.reset(seed=0)
        out["first_reset_s"] = round(time.perf_counter() - t0, 4)
        out |= measure(lambda: env.reset(seed=0), args.resets, "reset")
        page_path = env.page.evaluate("() => window.guiforge ? location.pathname : null")
        if page_path != "/mail/inbox":
            raise SystemExit(f"BrowserGym did not open the app page (path {page_path!r})")
        step = f"mouse_click({x}, {y})"
        out |= measure(lambda: env.step(step), args.steps, "step_click")
        before = env.page.evaluate("() => JSON.stringify(guiforge.getState().mail)")
        env.step(step)
        if env.last_action_error:
            raise SystemExit(f"BrowserGym's click failed: {env.last_action_error}")
        after = env.page.evaluate("() => JSON.stringify(guiforge.getState().mail)")
        out["click_changed_state"] = int(before != after)  # the star toggled
        env.pre_observation_delay = 0.5  # BrowserGym's default
        out |= measure(lambda: env.step(step), max(2, args.steps // 3), "step_click_default_delay")
        out["screenshot_shape"] = "x".join(str(v) for v in obs["screenshot"].shape)
    finally:
        env.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
