"""What a terminal task's screenshot costs: ``python bench/terminal_screen.py [--steps 20]``.

A real desktop terminal instance (bwrap sandbox, persistent bash) runs the same commands a
terminal reference runs (list, cat a CSV, awk a total) with its window drawn after each
step and without (``capture_screenshots`` off: the text alone, as before terminals had a
screen), interleaved so that the machine's load falls on both alike; then the window alone
is drawn full of output at each grid the presentation draws. Prints the step's wall and CPU
medians both ways, the PNG size per grid and the ratio of a step with its frame to one
without, as one JSON object.
"""

from __future__ import annotations

import argparse
import json

from _timing import loadavg, measure

from guiforge.envs import Action
from guiforge.envs.base import EnvSpec, TaskSpec
from guiforge.envs.desktop import DesktopEnv
from guiforge.envs.desktop.terminal_screen import TerminalScreen
from guiforge.presentation import TERMINAL_GRIDS

CSV = "name,region,amount\n" + "".join(f"row{i},{('north', 'south')[i % 2]},{i * 7 % 90}\n" for i in range(60))
COMMANDS = ("ls -la", "cat sales.csv", "awk -F, 'NR>1 {t+=$3} END {print t}' sales.csv", "wc -l sales.csv")


def step_figures(steps: int) -> dict[str, float]:
    env = DesktopEnv(EnvSpec(domain="desktop", variant="terminal"))
    env.start()
    task = TaskSpec(task_id="bench", domain="desktop", instruction="-", setup={"files": {"sales.csv": {"text": CSV}}},
                    presentation={"terminal": {"cols": 100, "rows": 30}, "theme": {"name": "terminal-aubergine"}})
    out: dict[str, float] = {}
    try:
        env.reset(task)
        turn = iter(range(10**9))

        def step() -> None:
            env.step(Action(type="bash", text=COMMANDS[next(turn) % len(COMMANDS)]))

        for _ in range(2):  # alternate rounds: a busy spell of the machine hits both sides
            for shots in (True, False):
                env.capture_screenshots = shots
                got = measure(step, steps // 2, "with_frame" if shots else "text_only")
                for k, v in got.items():
                    out[k] = out.get(k, 0.0) + v / 2
    finally:
        env.kill()
    return {k: round(v, 4) for k, v in out.items()}


def render_figures(frames: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for cols, rows in TERMINAL_GRIDS:
        screen = TerminalScreen(cols, rows)
        screen.prompt("/workspace")
        screen.command("cat sales.csv", CSV * 2, "/workspace")  # a full window
        out.update(measure(screen.png, frames, f"render_{cols}x{rows}"))
        out[f"render_{cols}x{rows}_png_kb"] = round(len(screen.png()) / 1024, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="bash steps timed each way")
    args = parser.parse_args()
    figures: dict[str, float] = {"loadavg": loadavg(), **step_figures(args.steps), **render_figures(args.steps)}
    ratios = {"step_with_frame_vs_text_only_cpu": round(figures["with_frame_cpu_s"] / figures["text_only_cpu_s"], 2),
              "step_with_frame_vs_text_only_wall": round(figures["with_frame_median_s"] / figures["text_only_median_s"], 2)}
    print(json.dumps({"bench": "terminal_screen", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
