"""The desktop's input channel against the process per action it replaced, in one run.

    python bench/desktop_input.py [--rounds 4] [--per-round 3] [--actions 10]

Before (reproduced here, :class:`ProcessChannel`): one ``xdotool`` process per action. After:
libxdo in process (guiforge.envs.desktop.xdo). Window searches run the command on both sides.
Measured on one DesktopEnv (gui variant, a spreadsheet open):

- ``action``: a click on a cell with the pointer read back, what a click step sends;
- ``step``: ``DesktopEnv.step`` of that click, whole (the settle's quiet window included).

Before and after alternate in rounds (ABBA), so a busy spell of the shared machine falls on
both alike. Figures: median and fastest wall seconds, and CPU seconds of the whole process
tree (this process, xdotool, LibreOffice, Xvfb) per operation. The last line is one JSON
object ``{"bench": "desktop_input", "figures": {...}, "ratios": {...}}``; every ratio is
before / after from this run.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable
from typing import Any

from _timing import loadavg, samples, summary

from guiforge.envs import Action, EnvSpec, TaskSpec
from guiforge.envs.desktop import DesktopEnv
from guiforge.envs.desktop.xdo import Done, Pointer
from guiforge.envs.desktop.xinput import xdotool_args
from guiforge.envs.desktop.xserver import XServer

CLICK = Action(type="click", x=300, y=300)


class ProcessChannel:
    """The input as it was: one ``xdotool`` process per command chain (Xdo.perform)."""

    def __init__(self, x: XServer):
        self.x = x

    def perform(self, args: list[str]) -> Done:
        done = self.x.xdotool(*args)
        if done.returncode != 0:
            return Done(error=done.stderr.strip()[-300:] or "xdotool error")
        shell = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
        if "WINDOW" not in shell:
            return Done()
        return Done(pointer=Pointer(int(shell["X"]), int(shell["Y"]), int(shell["WINDOW"])))


def xlsx() -> bytes:
    # heavy: openpyxl, imported when this runs
    from openpyxl import Workbook

    wb = Workbook()
    for row in (["Region", "Q1"], ["North", 10], ["South", 30]):
        wb.active.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


class Sides:
    """Switches one DesktopEnv between the input of before and of after."""

    def __init__(self, env: DesktopEnv):
        assert env.x is not None
        self.x = env.x
        self.channel, self.process = self.x.input, ProcessChannel(self.x)

    def use(self, side: str) -> None:
        self.x.input = self.process if side == "before" else self.channel  # type: ignore[assignment]


def compare(name: str, sides: Sides, op: Callable[[str], Any], rounds: int, per: int) -> dict[str, float]:
    walls: dict[str, list[float]] = {"before": [], "after": []}
    cpus: dict[str, list[float]] = {"before": [], "after": []}
    for r in range(rounds):
        for side in ("before", "after") if r % 2 == 0 else ("after", "before"):
            sides.use(side)
            w, c = samples(lambda side=side: op(side), per)
            walls[side] += w
            cpus[side] += c
    sides.use("after")
    return summary(walls["before"], cpus["before"], f"{name}_before") | summary(walls["after"], cpus["after"],
                                                                               f"{name}_after")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--per-round", type=int, default=3, help="steps per side and round")
    ap.add_argument("--actions", type=int, default=10, help="actions per side and round")
    args = ap.parse_args()
    task = TaskSpec(task_id="bench-input", domain="desktop", instruction="look",
                    setup={"files": {"r.xlsx": xlsx()}, "open": "r.xlsx"})
    figures: dict[str, float] = {"loadavg_1m_start": loadavg()}
    env = DesktopEnv(EnvSpec(domain="desktop", variant="gui"))
    env.start()
    try:
        env.reset(task)
        sides = Sides(env)
        width, height = env.width, env.height
        click = [*xdotool_args(CLICK, width, height), "getmouselocation", "--shell"]
        figures |= compare("action", sides, lambda _side: sides.x.perform(click), args.rounds, args.actions)
        figures |= compare("step", sides, lambda _side: env.step(CLICK), args.rounds, args.per_round)

    finally:
        env.kill()
    figures["loadavg_1m_end"] = loadavg()
    ratios = {}
    for name in ("action", "step"):
        for kind in ("median", "cpu"):
            after = figures[f"{name}_after_{kind}_s"]
            ratios[f"{name}_{kind}_before_over_after"] = round(figures[f"{name}_before_{kind}_s"] / after, 2) \
                if after else None
    print(json.dumps({"bench": "desktop_input", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    sys.exit(main())
