"""BrowserGym's half of bench/envs.py. Runs inside BrowserGym's own venv (its Playwright is
pinned and older than ours) and must not import guiforge. It opens the same app page, served
on 127.0.0.1 by bench/envs.py, loads the same seed, and times BrowserGym's reset and a
coordinate click (``mouse_click``) on the same element.

It is a command loop, so bench/envs.py can interleave BrowserGym's operations with its own
and a busy spell of the shared machine falls on both sides alike: each line on stdin is
``reset N``, ``click N``, ``click_default_delay N`` or ``quit``; each answer is one JSON line
on stdout with the wall and process-tree CPU seconds of each of the N operations. The first
line out (after the untimed first reset) says the page is ready. Anything BrowserGym or its
libraries print goes to stderr, so stdout carries only answers.

BrowserGym settings: the task's ``slow_mo`` is 0 (its base class defaults to 1000 ms per
Playwright call) and ``pre_observation_delay`` is 0 for the timed steps (its default 0.5 s
sleep is timed separately, ``click_default_delay``), so the comparison is against
BrowserGym at its fastest.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

# bench/_timing is stdlib only: BrowserGym's venv can import it (this file's folder is on the path)
from _timing import samples
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
    args = ap.parse_args()
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints must not corrupt answers

    def answer(obj: dict) -> None:
        answers.write(json.dumps(obj) + "\n")

    w, h = (int(v) for v in args.viewport.split("x"))
    x, y = (float(v) for v in args.click.split(","))
    env = BrowserEnv(task_entrypoint=GuiforgePageTask,
                     task_kwargs={"url": args.url, "seed_text": args.seed_file.read_text(), "width": w, "height": h},
                     headless=True, pre_observation_delay=0.0,
                     action_mapping=HighLevelActionSet(subsets=["coord"]).to_python_code)
    step = f"mouse_click({x}, {y})"
    try:
        t0 = time.perf_counter()
        obs, _ = env.reset(seed=0)
        first = round(time.perf_counter() - t0, 4)
        page_path = env.page.evaluate("() => window.guiforge ? location.pathname : null")
        if page_path != "/mail/inbox":
            raise SystemExit(f"BrowserGym did not open the app page (path {page_path!r})")
        before = env.page.evaluate("() => JSON.stringify(guiforge.getState().mail)")
        env.step(step)
        if env.last_action_error:
            raise SystemExit(f"BrowserGym's click failed: {env.last_action_error}")
        after = env.page.evaluate("() => JSON.stringify(guiforge.getState().mail)")
        answer({"ready": True, "first_reset_s": first, "click_changed_state": int(before != after),  # the star toggled
                "screenshot_shape": "x".join(str(v) for v in obs["screenshot"].shape)})

        def click_default_delay() -> None:
            env.pre_observation_delay = 0.5  # BrowserGym's default
            try:
                env.step(step)
            finally:
                env.pre_observation_delay = 0.0

        ops = {"reset": lambda: env.reset(seed=0), "click": lambda: env.step(step),
               "click_default_delay": click_default_delay}
        for line in sys.stdin:
            words = line.split()
            if not words or words[0] == "quit":
                break
            op, n = words[0], int(words[1]) if len(words) > 1 else 1
            if op not in ops:
                answer({"error": f"unknown command {op!r}"})
                continue
            walls, cpus = samples(ops[op], n)
            answer({"wall": walls, "cpu": cpus})
    finally:
        env.close()


if __name__ == "__main__":
    main()
