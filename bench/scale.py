"""Environments as a service on this machine: rollouts/s with one env host and with two, the
service's overhead per step against in-process environments, and how busy a host's leased
instances are with a teacher behind a model server of heavy-tailed latency.

    python bench/scale.py [--episodes 8] [--card mail.reply_invoice_total] [--steps 30]
                          [--capacity 2] [--model-episodes 6] [--median-ms 200] [--p99-ms 2000]

Hosts are real ``guiforge envs serve`` processes on loopback (guiforge.testing.env_service),
web instances in Chromium; the client is the run's own path: an EnvManager over the remote
kinds (a pipeline's ``envs: [...]``) and guiforge.harness.episode.run_episode.

- overhead: one web instance in process and one on a host, the same task reset on both, then
  blocks of the same scroll step (down, up) alternating between them, so load from other
  jobs falls on both alike. The service's overhead per step is each remote step's round
  trip (client's manager, HTTP, frame, the host's framework) less the host's own time for
  the step (its ``Server-Timing`` header), median over the steps; the median remote step
  less the median local one is printed beside it (it moves with the load).
- rollouts/s: the scripted teacher's episodes (reference solution, default noise) on
  ``--capacity`` slots per host, as many episodes at once as there are slots, with one host
  and then two (each host's instances warmed by an untimed first round).
- utilisation: a teacher through the OpenAI wire format (guiforge.testing.model_server,
  lognormal latency with the given median and p99) that looks around (scrolls) four times and
  answers; busy over leased seconds from the host's ``/capacity`` before and after.

On a machine of 2 cores shared with other jobs, two hosts compete for the same cores: the
two-host figure says what the service costs, not what a second machine would add. The last
line is one JSON object ``{"bench": "scale", "figures": {...}, "ratios": {...}}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from _timing import cpu_by_pid, loadavg

from guiforge.envs import Action, EnvManager, EnvSpec, default_factories
from guiforge.envs.service.kind import RemoteKinds
from guiforge.harness.context import ContextPolicy
from guiforge.harness.episode import run_episode
from guiforge.harness.policies import ModelPolicy, Noise, ScriptedTeacher
from guiforge.models import make_client
from guiforge.models.config import ModelConfig
from guiforge.paths import SKILLS_DIR
from guiforge.testing.env_service import TOKEN, EnvService
from guiforge.testing.model_server import ModelServer, ServerBehaviour, lognormal_latency

WEB = EnvSpec(domain="web")
KEY = "GUIFORGE_BENCH_KEY"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def web_tasks(card_id: str, n: int, seed: int) -> list[tuple[Any, list[dict]]]:
    """Up to ``n`` (TaskSpec, reference steps) of the card's web instances on sample worlds."""
    from guiforge.skills.check import sample_worlds
    from guiforge.skills.instantiate import instantiate
    from guiforge.skills.loader import load_card
    from guiforge.tasks.candidates import candidate_row
    from guiforge.tasks.materialize import task_spec

    app, name = card_id.split(".", 1)
    card = load_card(SKILLS_DIR / app / f"{name}.yaml", SKILLS_DIR)
    out = []
    for world in sample_worlds(max(8, 3 * n), seed=seed):
        for c in instantiate(card, world, seed):
            if c.domain == "web" and len(out) < n:
                row = candidate_row(c)
                out.append((task_spec(row, world), json.loads(row["reference_json"])))
    if not out:
        raise SystemExit(f"bench/scale.py: card {card_id} gave no web task on the sample worlds; pick a web card")
    return out


# -- overhead per step ------------------------------------------------------------------

def step_overhead(host: EnvService, task, steps: int) -> dict[str, float]:
    moves = [Action(type="scroll", x=500, y=500, direction=d, amount=1) for d in ("down", "up")]
    times: dict[str, list[float]] = {"local": [], "remote": []}
    added: list[float] = []  # a remote step's round trip less the host's own time for it
    frame_bytes: list[int] = []
    with EnvManager(default_factories(), max_instances=1) as local, \
            EnvManager(RemoteKinds([host.url]), max_instances=1) as remote:
        leases = {"local": local.acquire(WEB), "remote": remote.acquire(WEB)}
        for lease in leases.values():
            lease.reset(task)
            for a in moves:  # warm-up
                lease.step(a)
        block = 5
        server_pid = host.proc.pid
        cpu = {"local": 0.0, "remote": 0.0}  # this process's CPU, plus the host's own process for remote
        for i in range(0, steps, block):
            for side in ("local", "remote") if (i // block) % 2 == 0 else ("remote", "local"):
                c0 = time.process_time() + (cpu_by_pid([server_pid]).get(server_pid, 0.0) if side == "remote" else 0)
                for j in range(block):
                    t0 = time.perf_counter()
                    result = leases[side].step(moves[j % 2])
                    took = time.perf_counter() - t0
                    times[side].append(took)
                    if side == "remote":
                        frame_bytes.append(len(result.observation.screenshot or b""))
                        added.append(took - leases[side].env.host_ms / 1000)
                c1 = time.process_time() + (cpu_by_pid([server_pid]).get(server_pid, 0.0) if side == "remote" else 0)
                cpu[side] += c1 - c0
        for lease in leases.values():
            lease.release()
    local_ms, remote_ms = (1000 * statistics.median(times[s]) for s in ("local", "remote"))
    return {"step_local_ms_median": round(local_ms, 1), "step_remote_ms_median": round(remote_ms, 1),
            "service_overhead_ms_per_step": round(1000 * statistics.median(added), 1),
            "service_overhead_ms_per_step_p90": round(1000 * sorted(added)[int(0.9 * (len(added) - 1))], 1),
            "remote_less_local_ms_median": round(remote_ms - local_ms, 1),
            # CPU barely moves with load: the client's and the host's Python processes per remote
            # step (Chromium's processes excluded on both sides) against this process per local step
            "service_cpu_ms_per_step": round(1000 * (cpu["remote"] - cpu["local"]) / len(times["local"]), 1),
            "step_local_cpu_ms": round(1000 * cpu["local"] / len(times["local"]), 1),
            "step_remote_cpu_ms": round(1000 * cpu["remote"] / len(times["remote"]), 1),
            "step_local_ms_mean": round(1000 * statistics.fmean(times["local"]), 1),
            "step_remote_ms_mean": round(1000 * statistics.fmean(times["remote"]), 1),
            "frame_bytes_median": int(statistics.median(frame_bytes)), "overhead_steps": len(times["local"])}


# -- rollouts per second ----------------------------------------------------------------

def rollouts_per_s(hosts: list[EnvService], tasks, episodes: int, capacity: int, seed: int) -> dict[str, float]:
    slots = capacity * len(hosts)
    context = ContextPolicy(kind="window")
    with EnvManager(RemoteKinds([h.url for h in hosts]), max_instances=slots) as manager:

        def one(i: int):
            task, reference = tasks[i % len(tasks)]
            teacher = ScriptedTeacher(reference, "web", None, Noise(), seed=seed * 1000 + i, task_id=task.task_id)
            with manager.acquire(WEB) as lease:
                return run_episode(lease, task, teacher, context)

        with ThreadPoolExecutor(slots) as pool:
            list(pool.map(one, range(slots)))  # warm-up: every host's instances start
            t0 = time.perf_counter()
            done = list(pool.map(one, range(slots, slots + episodes)))
            wall = time.perf_counter() - t0
    failures = [e.error for e in done if e.env_failure]
    if failures:
        raise SystemExit(f"bench/scale.py: environment failures: {failures[:3]}")
    steps = sum(len(e.steps) for e in done)
    return {"rollouts_per_s": round(episodes / wall, 3), "steps_per_s": round(steps / wall, 2),
            "wall_s": round(wall, 2), "slots": slots}


# -- utilisation with a model teacher ----------------------------------------------------

def looking_teacher(looks: int):
    """A teacher endpoint's replies (guiforge JSON): scroll ``looks`` times, then answer."""

    def reply(provider: str, body: dict) -> str:
        turns = sum(m["role"] == "assistant" for m in body["messages"])
        if turns < looks:
            return json.dumps({"thought": "I look further down.",
                               "action": {"type": "scroll", "x": 500, "y": 500, "direction": "down", "amount": 1}})
        return json.dumps({"thought": "That is all.", "action": {"type": "answer", "answer": "done"}})

    return reply


def utilisation(host: EnvService, tasks, episodes: int, capacity: int, median_s: float, p99_s: float,
                seed: int) -> dict[str, float]:
    os.environ.setdefault(KEY, "sk-local")
    behaviour = ServerBehaviour(latency=lognormal_latency(median_s, p99_s), seed=seed)
    context = ContextPolicy(kind="window")
    with ModelServer(looking_teacher(4), behaviour) as server, \
            EnvManager(RemoteKinds([host.url]), max_instances=capacity) as manager:
        client = make_client(ModelConfig(provider="openai", model="bench-teacher", base_url=server.openai_base_url,
                                         api_key_env=KEY, cache=False, max_retries=2, seed=seed))

        def one(i: int):
            task, _ = tasks[i % len(tasks)]
            with manager.acquire(WEB) as lease:
                return run_episode(lease, task, ModelPolicy(client, sample=i), context)

        with ThreadPoolExecutor(capacity) as pool:
            list(pool.map(one, range(capacity)))  # warm-up
            before = host.capacity_figures()
            t0 = time.perf_counter()
            done = list(pool.map(one, range(capacity, capacity + episodes)))
            wall = time.perf_counter() - t0
            after = host.capacity_figures()
    busy, leased = after["busy_s"] - before["busy_s"], after["leased_s"] - before["leased_s"]
    model_s = sum(s.latency_s for e in done for s in e.steps)
    return {"env_utilisation": round(busy / leased, 3), "env_busy_s": round(busy, 2), "env_leased_s": round(leased, 2),
            "model_s_per_episode": round(model_s / episodes, 2), "model_episodes": episodes,
            "model_rollouts_per_s": round(episodes / wall, 3),
            "model_env_failures": sum(e.env_failure for e in done)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=8, help="timed scripted episodes per host count")
    ap.add_argument("--card", default="mail.reply_invoice_total")
    ap.add_argument("--steps", type=int, default=30, help="steps per side for the overhead")
    ap.add_argument("--capacity", type=int, default=2, help="slots per host")
    ap.add_argument("--model-episodes", type=int, default=6)
    ap.add_argument("--median-ms", type=float, default=200)
    ap.add_argument("--p99-ms", type=float, default=2000)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args(argv)

    os.environ["GUIFORGE_ENVS_TOKEN"] = TOKEN
    tasks = web_tasks(args.card, 4, args.seed)
    figures: dict[str, Any] = {"loadavg_1m": loadavg(), "cpus": os.cpu_count(), "card": args.card,
                               "capacity_per_host": args.capacity, "episodes": args.episodes}
    with EnvService(kinds="web", capacity=args.capacity) as first:
        log("overhead per step ...")
        figures |= step_overhead(first, tasks[0][0], args.steps)
        log("rollouts with one host ...")
        figures |= {f"one_host_{k}": v for k, v in rollouts_per_s([first], tasks, args.episodes, args.capacity,
                                                                  args.seed).items()}
        with EnvService(kinds="web", capacity=args.capacity) as second:
            log("rollouts with two hosts ...")
            figures |= {f"two_hosts_{k}": v for k, v in rollouts_per_s([first, second], tasks, args.episodes,
                                                                       args.capacity, args.seed).items()}
        log("utilisation with a model teacher ...")
        figures |= utilisation(first, tasks, args.model_episodes, args.capacity, args.median_ms / 1000,
                               args.p99_ms / 1000, args.seed)
    figures["loadavg_1m_end"] = loadavg()
    ratios = {
        "two_hosts_vs_one_rollouts_per_s": round(figures["two_hosts_rollouts_per_s"]
                                                 / figures["one_host_rollouts_per_s"], 3),
        "remote_vs_local_step": round(figures["step_remote_ms_median"] / figures["step_local_ms_median"], 3),
    }
    print(json.dumps({"bench": "scale", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
