"""Measure the desktop domain's latencies on this machine; prints one JSON object.

    python -m guiforge.envs.desktop.measure [--resets 10]

Figures are medians in seconds: Xvfb start, LibreOffice reset (window mapped / first
settled screenshot; warm resets, which find the next LibreOffice started during the
``--episode-s`` before them, and the cold first one), xdotool click and type, screen grab and PNG encode, one-shot bwrap
command, persistent-shell command. The load average is printed too: on a shared machine
it explains most of the spread.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import time
from collections.abc import Callable

from guiforge.envs import Action, EnvSpec, TaskSpec, to_grid
from guiforge.envs.desktop.env import DesktopEnv
from guiforge.envs.desktop.xinput import xdotool_args
from guiforge.envs.desktop.xserver import XServer
from guiforge.envs.sandbox import Sandbox


def _median(fn: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return round(statistics.median(times), 4)


def _xlsx() -> bytes:
    # heavy: lxml, numpy, openpyxl, imported when this runs
    from openpyxl import Workbook

    wb = Workbook()
    wb.active.append(["Region", "Q1"])
    wb.active.append(["North", 10])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def measure(resets: int = 10, episode_s: float = 2.0) -> dict[str, float]:
    figures: dict[str, float] = {"load_average_1m": round(os.getloadavg()[0], 2)}

    def xvfb_cycle() -> None:
        x = XServer(1280, 720)
        x.start()
        x.close()

    figures["xvfb_start_s"] = _median(xvfb_cycle, 5)

    with Sandbox.create() as sb:
        figures["bwrap_oneshot_s"] = _median(lambda: sb.run(["true"]), 20)
        shell = sb.shell()
        figures["shell_command_s"] = _median(lambda: shell.run("true"), 50)
        figures["shell_start_s"] = _median(shell.restart, 5)
        shell.close()

    env = DesktopEnv(EnvSpec(domain="desktop", variant="hybrid"))
    started = time.perf_counter()
    env.start()
    figures["desktop_start_s"] = round(time.perf_counter() - started, 3)
    try:
        task = TaskSpec(task_id="measure", domain="desktop", instruction="measure",
                        setup={"files": {"report.xlsx": _xlsx()}, "open": "report.xlsx"})
        windows, readies, totals, cpus, cold = [], [], [], [], []
        for i in range(resets + 1):
            if i:
                time.sleep(episode_s)  # an episode's worth of time: the spare starts meanwhile
            started = time.perf_counter()
            env.reset(task)
            took = time.perf_counter() - started
            if not (env.office and env.office.warm):
                cold.append(took)
                continue
            totals.append(took)
            windows.append(env.timings["window_s"])
            readies.append(env.timings["launch_s"])
            cpus.append(env.timings["launch_cpu_s"])
        figures["reset_cold_s"] = round(statistics.median(cold), 3) if cold else None
        figures["warm_resets"] = len(totals)
        figures["lo_window_s"] = round(statistics.median(windows), 3)
        figures["lo_content_s"] = round(statistics.median(readies), 3)
        figures["reset_s"] = round(statistics.median(totals), 3)
        figures["lo_launch_cpu_s"] = round(statistics.median(cpus), 3)
        x = env.x
        assert x is not None
        cell = Action(type="click", x=to_grid(600, 400, 1280, 720)[0], y=to_grid(600, 400, 1280, 720)[1])
        figures["xdotool_click_s"] = _median(lambda: x.xdotool(*xdotool_args(cell, 1280, 720)), 10)
        figures["xdotool_type_5_chars_s"] = _median(
            lambda: x.xdotool(*xdotool_args(Action(type="type", text="hello"), 1280, 720)), 10)
        figures["grab_s"] = _median(x.grab, 20)
        frame = x.grab()
        figures["png_encode_s"] = _median(lambda: x.png(frame), 10)
        figures["step_click_s"] = _median(lambda: env.step(cell), 10)
        figures["step_bash_s"] = _median(lambda: env.step(Action(type="bash", text="true")), 10)
    finally:
        env.kill()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resets", type=int, default=10)
    parser.add_argument("--episode-s", type=float, default=2.0,
                        help="seconds between resets, as an episode would take")
    args = parser.parse_args()
    print(json.dumps({"measure": "desktop", "figures": measure(args.resets, args.episode_s)}))


if __name__ == "__main__":
    main()
