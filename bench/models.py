"""Model-stage throughput against a rate-limited, heavy-tailed OpenAI-compatible server,
side by side with distilabel and bespokelabs-curator on the same prompts and server.

    python bench/models.py [--prompts 800] [--limit 16] [--factors 1,2] [--median-ms 200]
                           [--p99-ms 2000] [--seed 7] [--skip distilabel,curator]

The server (guiforge.testing.model_server, in its own process) serves at most ``--limit``
requests at once and answers 429 with ``retry-after-ms: 50`` beyond that. Each prompt's
latency is lognormal (median 200 ms, p99 2 s) drawn from a generator seeded by the prompt
itself, so every client meets exactly the same work whatever order or retries it uses.

Each client runs in its own subprocess (distilabel and curator in their own venvs under
bench/.venvs/, created from PyPI on the first run) at client concurrency = limit x factor;
see bench/_models_side.py for how each one is driven. A fresh server per run. Two controls:
``aiohttp_bare`` (factor 1: a semaphore and raw aiohttp, the floor any Python client gets
from this server on this machine) and ``guiforge_static`` (factor 2: guiforge with its
previous fixed semaphore and blind backoff).

Figures per run: requests/s, failed requests, 429s, the server's peak in flight, client
CPU ms per request, the share of wall time the client's threads waited for a CPU
(``runqueue_wait_per_wall``, from /proc schedstat: the machine, not the client), how busy
the server's slots were (``server_slots_busy``) and how far its loaded threads overran the
drawn latencies (``server_overrun``). The ideal is ``limit / mean latency`` over these prompts (every slot
always busy); ``schedule_bound`` is what a zero-overhead client reaches with the same
prompts in the same order (the last, longest calls drain with slots idle). The last line
is one JSON object ``{"bench": "models", "figures": {...}, "ratios": {...}}``; a framework
that cannot be installed or run has figures null and its reason.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _rate_limited_server import latency_of, schedule_bound_s, serve

BENCH = Path(__file__).resolve().parent
VENVS = BENCH / ".venvs"
SIDE = BENCH / "_models_side.py"
# The versions this bench was written against; each in its own venv (their pins clash with ours).
# distilabel 1.5.3 imports `requests` without declaring it.
PACKAGES = {"distilabel": ["distilabel[openai]==1.5.3", "requests"], "curator": ["bespokelabs-curator==0.1.31"]}
PROBES = {"distilabel": "import distilabel.models.llms", "curator": "from bespokelabs import curator"}
RUN_TIMEOUT_S = 900


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- the workload ---------------------------------------------------------------------------
def make_prompts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    apps = ["mail", "calendar", "shop", "bank", "notes", "travel", "chat", "contacts"]
    return [f"[{i}] Plan the next GUI action in the {rng.choice(apps)} app: "
            f"step {rng.randint(1, 30)} of a task with {rng.randint(2, 9)} sub-goals." for i in range(n)]










# -- the frameworks' venvs ------------------------------------------------------------------
def python_for(client: str) -> tuple[Path | None, str | None]:
    """The interpreter that runs ``client``, creating its venv on first use; or the reason
    it cannot be had."""
    if client.startswith("guiforge"):
        return Path(sys.executable), None
    venv = VENVS / client
    python = venv / "bin" / "python"
    probe = [str(python), "-c", PROBES[client]]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python, None
    spec = " ".join(PACKAGES[client])
    log(f"creating {venv} and installing {spec} from PyPI (first run only, a few minutes)")
    made = subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], capture_output=True, text=True)
    if made.returncode != 0:
        return None, f"cannot create {venv}: {made.stderr.strip()[-300:]}"
    pip = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", *PACKAGES[client]],
                         capture_output=True, text=True, timeout=1800)
    if pip.returncode != 0:
        tail = " | ".join((pip.stderr or pip.stdout).strip().splitlines()[-3:])
        return None, f"pip install {spec} failed (exit {pip.returncode}): {tail}"
    found = subprocess.run(probe, capture_output=True, text=True)
    if found.returncode != 0:
        return None, f"{client} installed but does not import: {found.stderr.strip()[-300:]}"
    return python, None


# -- one run --------------------------------------------------------------------------------
def run_client(client: str, python: Path, prompts_file: Path, concurrency: int, args) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    server = ctx.Process(target=serve, args=(child, args.limit, args.seed, args.median_ms / 1000, args.p99_ms / 1000),
                         daemon=True)
    server.start()
    base_url = parent.recv()
    load = os.getloadavg()[0]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env.pop(name, None)
    env["NO_PROXY"] = "127.0.0.1,localhost"
    try:
        proc = subprocess.run([str(python), str(SIDE), client, "--base-url", base_url, "--concurrency", str(concurrency),
                               "--prompts", str(prompts_file)], capture_output=True, text=True, env=env,
                              timeout=RUN_TIMEOUT_S)
        lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
        if proc.returncode != 0 or not lines:
            tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
            return {"error": f"{client} exited {proc.returncode}: {tail[-500:]}"}
        result = json.loads(lines[-1])
    except subprocess.TimeoutExpired:
        result = {"error": f"{client} did not finish within {RUN_TIMEOUT_S}s"}
    finally:
        parent.send("stop")
        stats = parent.recv() if parent.poll(30) else {}
        server.join(10)
    return {**result, "server": stats, "loadavg_1m": round(load, 2)}


def summarise(name: str, run: dict[str, Any], n: int, limit: int) -> dict[str, Any]:
    if "error" in run and "wall_s" not in run:
        return {f"{name}_rps": None, f"{name}_reason": run["error"]}
    server = run["server"]
    out = {
        f"{name}_rps": round(run["ok"] / run["wall_s"], 2),
        f"{name}_wall_s": round(run["wall_s"], 2),
        f"{name}_failed": run["failed"],
        f"{name}_429s": server.get("rejected_429"),
        f"{name}_server_max_in_flight": server.get("max_in_flight"),
        # Slot-seconds the server spent inside requests, over what its slots offered while
        # this client ran: below 1, slots sat idle waiting for the client's next request.
        f"{name}_server_slots_busy": round(server["busy_s"] / (limit * server["span_s"]), 3) if server.get("span_s") else None,
        # Inside-request time over the drawn latencies: above 1, the (loaded) machine held the
        # server's own threads back after their sleep; no client can win that back.
        f"{name}_server_overrun": round(server["busy_s"] / server["drawn_s"], 3) if server.get("drawn_s") else None,
        f"{name}_cpu_ms_per_request": round(1000 * run["cpu_s"] / n, 2),
        f"{name}_runqueue_wait_per_wall": round(run.get("runqueue_wait_s", 0.0) / run["wall_s"], 2),
        f"{name}_loadavg_1m": run["loadavg_1m"],
    }
    if run.get("limiter"):
        out[f"{name}_final_limit"] = run["limiter"]["limit"]
    if run.get("failed"):
        out[f"{name}_first_error"] = run.get("error")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=800)
    ap.add_argument("--limit", type=int, default=16, help="the server's concurrency limit")
    ap.add_argument("--factors", default="1,2", help="client concurrency = limit x each factor")
    ap.add_argument("--median-ms", type=float, default=200.0)
    ap.add_argument("--p99-ms", type=float, default=2000.0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--skip", default="", help="comma-separated: distilabel, curator")
    args = ap.parse_args(argv)

    factors = [int(f) for f in args.factors.split(",")]
    skip = {s for s in args.skip.split(",") if s}
    prompts = make_prompts(args.prompts, args.seed)
    latencies = [latency_of(p, args.seed, args.median_ms / 1000, args.p99_ms / 1000) for p in prompts]
    mean_latency = sum(latencies) / len(latencies)
    figures: dict[str, Any] = {
        "prompts": len(prompts), "server_limit": args.limit,
        "latency_mean_ms": round(1000 * mean_latency, 1),
        "latency_median_ms": round(1000 * sorted(latencies)[len(latencies) // 2], 1),
        "latency_p99_ms": round(1000 * sorted(latencies)[int(0.99 * len(latencies))], 1),
        "latency_max_ms": round(1000 * max(latencies), 1),
        "ideal_rps": round(args.limit / mean_latency, 2),
        "schedule_bound_rps": round(len(prompts) / schedule_bound_s(latencies, args.limit), 2),
        "cpus": os.cpu_count(),
    }

    clients = ["guiforge", "distilabel", "curator"]
    pythons: dict[str, Path] = {}
    for client in clients:
        if client in skip:
            figures[f"{client}_x1_rps"] = None
            figures[f"{client}_reason"] = "skipped (--skip)"
            continue
        python, reason = python_for(client)
        if python is None:
            figures[f"{client}_x1_rps"] = None
            figures[f"{client}_reason"] = reason
            continue
        pythons[client] = python

    with tempfile.TemporaryDirectory() as tmp:
        prompts_file = Path(tmp) / "prompts.json"
        prompts_file.write_text(json.dumps(prompts))
        plan = [(c, f) for f in factors for c in clients if c in pythons]
        if 1 in factors:  # the floor: the simplest client there is, at the same concurrency
            plan.insert(1, ("aiohttp-bare", 1))
        if 2 in factors:  # the same client with guiforge's previous fixed cap and blind backoff
            plan.append(("guiforge-static", 2))
        for client, factor in plan:
            python = pythons.get(client, Path(sys.executable))  # guiforge's venv has aiohttp too
            log(f"{client} at concurrency {args.limit * factor} ...")
            run = run_client(client, python, prompts_file, args.limit * factor, args)
            figures |= summarise(f"{client.replace('-', '_')}_x{factor}", run, len(prompts), args.limit)
            if not client.startswith("guiforge") and f"{client}_version" not in figures:
                figures[f"{client}_version"] = run.get("version")

    ratios: dict[str, float | None] = {}

    def ratio(name: str, a: str, b: str) -> None:
        x, y = figures.get(a), figures.get(b)
        ratios[name] = round(x / y, 3) if isinstance(x, int | float) and isinstance(y, int | float) and y else None

    for f in factors:
        ratio(f"guiforge_x{f}_vs_ideal", f"guiforge_x{f}_rps", "ideal_rps")
        ratio(f"guiforge_x{f}_vs_schedule_bound", f"guiforge_x{f}_rps", "schedule_bound_rps")
        ratio(f"guiforge_x{f}_vs_distilabel_x{f}", f"guiforge_x{f}_rps", f"distilabel_x{f}_rps")
        ratio(f"guiforge_x{f}_vs_curator_x{f}", f"guiforge_x{f}_rps", f"curator_x{f}_rps")
        ratio(f"distilabel_x{f}_vs_ideal", f"distilabel_x{f}_rps", "ideal_rps")
        ratio(f"curator_x{f}_vs_ideal", f"curator_x{f}_rps", "ideal_rps")
    if 1 in factors:
        ratio("guiforge_x1_vs_aiohttp_bare_x1", "guiforge_x1_rps", "aiohttp_bare_x1_rps")
        ratio("aiohttp_bare_x1_vs_ideal", "aiohttp_bare_x1_rps", "ideal_rps")
    if 2 in factors:
        ratio("guiforge_x2_vs_guiforge_static_x2", "guiforge_x2_rps", "guiforge_static_x2_rps")
    ratio("schedule_bound_vs_ideal", "schedule_bound_rps", "ideal_rps")
    print(json.dumps({"bench": "models", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
