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
import contextlib
import json
import os
import statistics
import time
from pathlib import Path

from browsergym.core.action.highlevel import HighLevelActionSet
from browsergym.core.env import BrowserEnv
from browsergym.core.task import AbstractBrowserTask

LOAD = "(t) => { const s = JSON.parse(t); return guiforge.loadState(s.apps, s.system, s.start, true); }"
TICK = os.sysconf("SC_CLK_TCK")


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


def tree() -> list[int]:
    """This process and its descendants (Playwright's driver, both Chromiums)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                children.setdefault(int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
    out, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def cpu_by_pid(pids: list[int]) -> dict[int, float]:
    out = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            out[pid] = (int(fields[11]) + int(fields[12])) / TICK
    return out


def timed(fn, n: int, prefix: str) -> dict[str, float]:
    """The same figures as bench/_timing.measure: processes a reset starts count in full;
    the browsers it closes lose their last slice (BrowserGym's CPU is undercounted)."""
    times, cpu = [], 0.0
    for _ in range(n):
        pids = tree()
        c0 = cpu_by_pid(pids)
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        c1 = cpu_by_pid(pids)  # read before the next /proc scan, whose own CPU must not count
        born = [pid for pid in tree() if pid not in c0]
        cpu += sum(v - c0[pid] for pid, v in c1.items()) + sum(cpu_by_pid(born).values())
    return {f"{prefix}_median_s": round(statistics.median(times), 4), f"{prefix}_min_s": round(min(times), 4),
            f"{prefix}_cpu_s": round(cpu / n, 4)}


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
        out |= timed(lambda: env.reset(seed=0), args.resets, "reset")
        page_path = env.page.evaluate("() => window.guiforge ? location.pathname : null")
        if page_path != "/mail/inbox":
            raise SystemExit(f"BrowserGym did not open the app page (path {page_path!r})")
        step = f"mouse_click({x}, {y})"
        out |= timed(lambda: env.step(step), args.steps, "step_click")
        before = env.page.evaluate("() => JSON.stringify(guiforge.getState().mail)")
        env.step(step)
        if env.last_action_error:
            raise SystemExit(f"BrowserGym's click failed: {env.last_action_error}")
        after = env.page.evaluate("() => JSON.stringify(guiforge.getState().mail)")
        out["click_changed_state"] = int(before != after)  # the star toggled
        env.pre_observation_delay = 0.5  # BrowserGym's default
        out |= timed(lambda: env.step(step), max(2, args.steps // 3), "step_click_default_delay")
        out["screenshot_shape"] = "x".join(str(v) for v in obs["screenshot"].shape)
    finally:
        env.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
