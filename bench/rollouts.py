"""Rollout steps/s through the full harness against a bare Playwright loop on the same page.

    python bench/rollouts.py [--episodes 12] [--card mail.reply_invoice_total] [--seed 3]

harness: the scripted teacher (reference solution + the default seeded noise) on web tasks
made from a shipped skill card over sample worlds (guiforge.skills.check.sample_worlds ->
instantiate -> guiforge.tasks.materialize.task_spec), each episode run by
guiforge.harness.episode.run_episode on an EnvManager lease: reset, per step context
building + policy + parse + WebEnv.step (hit test, click/type, screenshot, element scan),
then the verifier in its own process. Figures count every recorded step (the final
terminate included, as the trajectories table does).

bare: Playwright directly on the same WebEnv page, on the same actor thread, with no
harness: ``page.mouse.click`` on an empty spot + ``page.screenshot()``, per iteration.
bare_cdp: the same loop with WebEnv's own screenshot call (CDP capture with optimizeForSpeed,
about half of ``page.screenshot``), so the fastest click + screenshot loop there is.
bare_replay: the harness episodes' own actions (click at the same pixel, insert the same
text) + ``page.screenshot()`` with raw Playwright: the page work of the episodes without
the harness; the page is reset between episodes, untimed.

A breakdown times each part of a WebEnv click step alone on the same page (hit test,
element scan, CDP screenshot) next to the bare loop's Playwright calls.

Both sides run on Chromium's own 60 Hz frame clock (``GUIFORGE_BEGIN_FRAMES=0``): the bare
loops' ``page.screenshot()`` waits for that clock, which a page drawing frames on demand
(guiforge.envs.web.frames, the default on the headless shell) does not have.

Harness episodes and bare blocks alternate, so load from other jobs on the machine falls on
both alike; CPU seconds of the whole process tree (Python, Playwright's driver, Chromium)
per step are reported next to wall time. The last line is one JSON object
``{"bench": "rollouts", "figures": {...}, "ratios": {...}}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from typing import Any

from _timing import _tree, cpu_by_pid, loadavg

os.environ["GUIFORGE_BEGIN_FRAMES"] = "0"  # the bare loops need Chromium's own frame clock (see above)

from guiforge.envs import EnvManager, EnvSpec, default_factories
from guiforge.harness.context import ContextPolicy
from guiforge.harness.episode import Episode, run_episode
from guiforge.harness.policies import Noise, ScriptedTeacher
from guiforge.paths import SKILLS_DIR


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def tree_cpu() -> float:
    return sum(cpu_by_pid(_tree(os.getpid())).values())


class TimedLease:
    """The lease run_episode sees, timing each environment call (wall seconds)."""

    def __init__(self, lease):
        self.lease = lease
        self.seconds: dict[str, float] = defaultdict(float)

    def _timed(self, what: str, fn, *args):
        t0 = time.perf_counter()
        try:
            return fn(*args)
        finally:
            self.seconds[what] += time.perf_counter() - t0

    def reset(self, task):
        return self._timed("reset", self.lease.reset, task)

    def step(self, action):
        return self._timed("step", self.lease.step, action)

    def evaluate(self):
        return self._timed("evaluate", self.lease.evaluate)

    def observe(self):
        return self._timed("observe", self.lease.observe)


def web_tasks(card_id: str, n: int, seed: int) -> list[tuple[Any, list[dict]]]:
    """Up to ``n`` (TaskSpec, reference steps) for the card's web instances."""
    from guiforge.skills.check import sample_worlds
    from guiforge.skills.instantiate import instantiate
    from guiforge.skills.loader import load_card
    from guiforge.tasks.candidates import candidate_row
    from guiforge.tasks.materialize import task_spec

    app, name = card_id.split(".", 1)
    card = load_card(SKILLS_DIR / app / f"{name}.yaml", SKILLS_DIR)
    tasks = []
    for world in sample_worlds(max(8, 3 * n), seed=seed):  # about one world in three binds a web instance
        for c in instantiate(card, world, seed):
            if c.domain == "web" and len(tasks) < n:
                row = candidate_row(c)
                tasks.append((task_spec(row, world), json.loads(row["reference_json"])))
    if not tasks:
        raise SystemExit(f"bench/rollouts.py: card {card_id} gave no web task on the sample worlds; pick a web card")
    return tasks


def empty_spot(env) -> tuple[float, float]:
    """A CSS point whose click hits nothing interactive (so the page state never changes)."""
    w, h = env.css_size
    for x, y in ((w - 4, h - 4), (4, h - 4), (w / 2, h - 4), (w - 4, h / 2)):
        if env.target(x, y) is None:
            return x, y
    raise SystemExit("bench/rollouts.py: found no empty spot to click on the page")


def bare_loop(env, n: int, spot: tuple[float, float]) -> float:
    page = env.s.page
    t0 = time.perf_counter()
    for _ in range(n):
        page.mouse.click(*spot)
        page.screenshot()
    return time.perf_counter() - t0


def bare_cdp_loop(env, n: int, spot: tuple[float, float]) -> float:
    """The bare loop with WebEnv's screenshot call (CDP capture, optimizeForSpeed)."""
    page = env.s.page
    t0 = time.perf_counter()
    for _ in range(n):
        page.mouse.click(*spot)
        env.screenshot()
    return time.perf_counter() - t0


def bare_replay(env, task, episode: Episode) -> tuple[float, int]:
    """The episode's actions with raw Playwright + a screenshot each; (seconds, steps)."""
    env.reset(task)
    page = env.s.page
    steps = 0
    t0 = time.perf_counter()
    for s in episode.steps:
        a, px = s.action, s.action_pixels
        if a is not None and px and a.type in ("click", "double_click", "right_click") and "x" in px:
            page.mouse.click(px["x"] / env.scale, px["y"] / env.scale, click_count=2 if a.type == "double_click" else 1,
                             button="right" if a.type == "right_click" else "left")
        elif a is not None and a.type == "type" and a.text:
            page.keyboard.insert_text(a.text)
        page.screenshot()
        steps += 1
    return time.perf_counter() - t0, steps


def step_breakdown(env, spot: tuple[float, float], n: int) -> dict[str, float]:
    """What one WebEnv click step is made of, each part timed alone on the same page (median
    wall ms and mean CPU ms of the process tree), next to the bare loop's two calls."""
    from _timing import measure

    from guiforge.envs.actions import Action, to_grid

    x, y = spot
    gx, gy = to_grid(x * env.scale, y * env.scale, round(env.css_size[0] * env.scale),
                     round(env.css_size[1] * env.scale))
    scan = env.scan_script
    parts = {
        "webenv_step_click": lambda: env.step(Action(type="click", x=gx, y=gy)),
        "hit_test": lambda: env.hit(x, y),
        "element_scan": lambda: env.js(scan),
        "cdp_screenshot": env.screenshot,
        "playwright_click": lambda: env.s.page.mouse.click(x, y),
        "playwright_screenshot": lambda: env.s.page.screenshot(),
    }
    out: dict[str, float] = {}
    for name, fn in parts.items():
        m = measure(fn, n, name)
        out[f"part_{name}_ms"] = round(1000 * m[f"{name}_median_s"], 1)
        out[f"part_{name}_cpu_ms"] = round(1000 * m[f"{name}_cpu_s"], 1)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=12)
    ap.add_argument("--tasks", type=int, default=4, help="distinct task instances, cycled over the episodes")
    ap.add_argument("--card", default="mail.reply_invoice_total")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--context", default="window", choices=["full", "last_k", "summary", "window"])
    ap.add_argument("--parts", type=int, default=15, help="repetitions per part of the step breakdown")
    args = ap.parse_args(argv)

    tasks = web_tasks(args.card, args.tasks, args.seed)
    context = ContextPolicy(kind=args.context)
    figures: dict[str, Any] = {"loadavg_1m": loadavg(), "cpus": os.cpu_count(), "card": args.card,
                               "tasks": len(tasks), "episodes": args.episodes, "context": args.context}
    harness = {"wall": 0.0, "cpu": 0.0, "steps": 0, "success": 0}
    bare = {"wall": 0.0, "cpu": 0.0, "steps": 0}
    replay = {"wall": 0.0, "steps": 0}
    bare_cdp = {"wall": 0.0, "steps": 0}
    env_seconds: dict[str, float] = defaultdict(float)
    policy_s = 0.0
    per_step: list[float] = []

    with EnvManager(default_factories(), max_instances=1) as manager:
        lease = manager.acquire(EnvSpec(domain="web"))
        inst = lease._inst  # the bare loops run on the instance's own actor thread (Playwright's)

        def on_actor(fn):
            return inst.actor.submit(fn).result()

        env = lease.env
        warm_task, warm_ref = tasks[0]
        run_episode(lease, warm_task, ScriptedTeacher(warm_ref, "web", None, Noise(), 0, warm_task.task_id), context)
        spot = on_actor(lambda: empty_spot(env))
        on_actor(lambda: bare_loop(env, 5, spot))  # warm-up

        for i in range(args.episodes):
            task, reference = tasks[i % len(tasks)]
            teacher = ScriptedTeacher(reference, "web", None, Noise(), seed=args.seed * 1000 + i, task_id=task.task_id)
            timed = TimedLease(lease)
            c0 = tree_cpu()
            t0 = time.perf_counter()
            episode = run_episode(timed, task, teacher, context)
            wall = time.perf_counter() - t0
            harness["cpu"] += tree_cpu() - c0
            if episode.env_failure:
                raise SystemExit(f"bench/rollouts.py: environment failure in episode {i}: {episode.error}")
            harness["wall"] += wall
            harness["steps"] += len(episode.steps)
            harness["success"] += bool(episode.verdict and episode.verdict.success)
            for what, sec in timed.seconds.items():
                env_seconds[what] += sec
            policy_s += sum(s.latency_s for s in episode.steps)
            per_step.append(wall / max(1, len(episode.steps)))

            n = max(1, len(episode.steps))  # a bare block of the same length, right after
            c0 = tree_cpu()
            bare["wall"] += on_actor(lambda n=n: bare_loop(env, n, spot))
            bare["cpu"] += tree_cpu() - c0
            bare["steps"] += n

            bare_cdp["wall"] += on_actor(lambda n=n: bare_cdp_loop(env, n, spot))
            bare_cdp["steps"] += n

            sec, steps = on_actor(lambda task=task, episode=episode: bare_replay(env, task, episode))
            replay["wall"] += sec
            replay["steps"] += steps
        on_actor(lambda: env.reset(tasks[0][0]))
        figures |= on_actor(lambda: step_breakdown(env, spot, args.parts))
        lease.release()

    steps = harness["steps"]
    loop_wall = harness["wall"] - env_seconds["reset"] - env_seconds["evaluate"]
    figures |= {
        "harness_steps": steps,
        "harness_success_rate": round(harness["success"] / args.episodes, 3),
        "harness_steps_per_s": round(steps / harness["wall"], 2),
        "harness_step_loop_steps_per_s": round(steps / loop_wall, 2),
        "harness_ms_per_step_median_episode": round(1000 * statistics.median(per_step), 1),
        "harness_cpu_ms_per_step": round(1000 * harness["cpu"] / steps, 1),
        "harness_reset_ms_per_episode": round(1000 * env_seconds["reset"] / args.episodes, 1),
        "harness_evaluate_ms_per_episode": round(1000 * env_seconds["evaluate"] / args.episodes, 1),
        "harness_env_step_ms_per_step": round(1000 * env_seconds["step"] / steps, 1),
        "harness_policy_ms_per_step": round(1000 * policy_s / steps, 2),
        "harness_other_ms_per_step": round(1000 * (loop_wall - env_seconds["step"] - policy_s) / steps, 2),
        "bare_steps_per_s": round(bare["steps"] / bare["wall"], 2),
        "bare_cpu_ms_per_step": round(1000 * bare["cpu"] / bare["steps"], 1),
        "bare_replay_steps_per_s": round(replay["steps"] / replay["wall"], 2),
        "bare_cdp_steps_per_s": round(bare_cdp["steps"] / bare_cdp["wall"], 2),
        "loadavg_1m_end": loadavg(),
    }
    ratios = {
        "harness_vs_bare": round(figures["harness_steps_per_s"] / figures["bare_steps_per_s"], 3),
        "harness_step_loop_vs_bare": round(figures["harness_step_loop_steps_per_s"] / figures["bare_steps_per_s"], 3),
        "harness_vs_bare_replay": round(figures["harness_steps_per_s"] / figures["bare_replay_steps_per_s"], 3),
        "harness_step_loop_vs_bare_replay": round(figures["harness_step_loop_steps_per_s"]
                                                  / figures["bare_replay_steps_per_s"], 3),
        "harness_vs_bare_cdp": round(figures["harness_steps_per_s"] / figures["bare_cdp_steps_per_s"], 3),
        "harness_step_loop_vs_bare_cdp": round(figures["harness_step_loop_steps_per_s"]
                                               / figures["bare_cdp_steps_per_s"], 3),
        "bare_vs_harness_cpu_per_step": round(figures["bare_cpu_ms_per_step"] / figures["harness_cpu_ms_per_step"], 3),
        "reset_share_of_harness_wall": round(env_seconds["reset"] / harness["wall"], 3),
        "evaluate_share_of_harness_wall": round(env_seconds["evaluate"] / harness["wall"], 3),
        "env_step_share_of_harness_wall": round(env_seconds["step"] / harness["wall"], 3),
    }
    print(json.dumps({"bench": "rollouts", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
