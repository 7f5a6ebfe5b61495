"""What dense progress costs per step: the same scripted episodes with progress off and on.

    python bench/progress.py [--episodes 6] [--cards mail.reply_invoice_total,calc.sum_formula]

For each card (its first instances on sample worlds, in the card's own domain), episodes run
on one EnvManager lease with ``run_episode(progress=False)`` and ``progress=True``
alternately (same task, same teacher seed), so load from other jobs falls on both alike.
Figures per card: wall seconds per step without and with progress, the seconds progress
tracking took per step (final-state reads plus verdicts, ``Episode.progress_s``), final
states read and verdicts computed per step (a state that did not change is not scored
again), and whether the last step's progress agreed with the verdict. The last line is one
JSON object ``{"bench": "progress", "figures": {...}, "ratios": {...}}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from _timing import loadavg

from guiforge.envs import EnvManager, default_factories
from guiforge.gates.package_gate import env_spec
from guiforge.harness.context import ContextPolicy
from guiforge.harness.episode import run_episode
from guiforge.harness.policies import Noise, ScriptedTeacher
from guiforge.paths import SKILLS_DIR
from guiforge.skills.check import sample_worlds
from guiforge.skills.instantiate import instantiate
from guiforge.skills.loader import load_card
from guiforge.tasks.candidates import candidate_row
from guiforge.tasks.materialize import task_spec


def tasks_of(card_id: str, n: int, seed: int) -> list[tuple[Any, list[dict], str | None]]:
    """Up to ``n`` (TaskSpec, reference, variant) of the card in its first domain."""
    app, name = card_id.split(".", 1)
    card = load_card(SKILLS_DIR / app / f"{name}.yaml", SKILLS_DIR)
    out, domain = [], None
    for world in sample_worlds(max(8, 3 * n), seed=seed):
        for c in instantiate(card, world, seed):
            domain = domain or c.domain
            if c.domain == domain and len(out) < n:
                row = candidate_row(c)
                out.append((task_spec(row, world), json.loads(row["reference_json"]), row.get("variant")))
    if not out:
        raise SystemExit(f"bench/progress.py: card {card_id} gave no task on the sample worlds")
    return out


def bench_card(manager: EnvManager, card: str, episodes: int, seed: int) -> dict[str, Any]:
    tasks = tasks_of(card, 2, seed)
    task0, _, variant0 = tasks[0]
    lease = manager.acquire(env_spec(task0.domain, variant0), timeout_s=600)
    side = {False: {"wall": 0.0, "steps": 0}, True: {"wall": 0.0, "steps": 0, "progress_s": 0.0, "reads": 0,
                                                      "verified": 0, "agree": 0, "episodes": 0}}
    try:
        for i in range(episodes * 2 + 1):
            task, reference, variant = tasks[(i // 2) % len(tasks)]
            on = bool(i % 2)
            teacher = ScriptedTeacher(reference, task.domain, variant, Noise(), seed=seed * 1000 + i // 2,
                                      task_id=task.task_id)
            t0 = time.perf_counter()
            episode = run_episode(lease, task, teacher, ContextPolicy(), variant, progress=on)
            wall = time.perf_counter() - t0
            if episode.failure_kind:
                raise SystemExit(f"bench/progress.py: {card}: {episode.error}")
            if i == 0:
                continue  # warm-up
            s = side[on]
            s["wall"] += wall
            s["steps"] += len(episode.steps)
            if on:
                s["progress_s"] += episode.progress_s
                s["reads"] += episode.progress.reads
                s["verified"] += episode.progress.verified
                s["episodes"] += 1
                last = episode.steps[-1].progress["progress"]
                s["agree"] += (last == 1.0) == bool(episode.verdict.success)
    finally:
        lease.release()
    off, on = side[False], side[True]
    return {"domain": task0.domain, "steps_off": off["steps"], "steps_on": on["steps"],
            "wall_per_step_off_s": round(off["wall"] / max(off["steps"], 1), 4),
            "wall_per_step_on_s": round(on["wall"] / max(on["steps"], 1), 4),
            "progress_per_step_s": round(on["progress_s"] / max(on["steps"], 1), 4),
            "reads_per_step": round(on["reads"] / max(on["steps"], 1), 3),
            "verdicts_per_step": round(on["verified"] / max(on["steps"], 1), 3),
            "last_step_agrees_with_verdict": f"{on['agree']}/{on['episodes']}"}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=6, help="episodes per side per card")
    ap.add_argument("--cards", default="mail.reply_invoice_total,calc.sum_formula")
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args(argv)
    figures: dict[str, Any] = {"loadavg_1m": loadavg(), "cpus": os.cpu_count(), "episodes": args.episodes}
    ratios: dict[str, float] = {}
    with EnvManager(default_factories(), max_instances=1) as manager:
        for card in args.cards.split(","):
            print(f"bench/progress.py: {card}", file=sys.stderr, flush=True)
            f = bench_card(manager, card, args.episodes, args.seed)
            figures[card] = f
            ratios[f"{card}:wall_per_step_on_vs_off"] = round(f["wall_per_step_on_s"] / max(f["wall_per_step_off_s"],
                                                                                            1e-9), 3)
            ratios[f"{card}:progress_share_of_step"] = round(f["progress_per_step_s"] / max(f["wall_per_step_on_s"],
                                                                                           1e-9), 3)
    print(json.dumps({"bench": "progress", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
