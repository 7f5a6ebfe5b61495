"""The client half of bench/models.py: sends every prompt of a file to an OpenAI-compatible
server through one framework and prints one JSON line with the wall time. Runs in
guiforge's venv or in distilabel's / curator's own venv (bench/.venvs/), so it imports only
the framework it drives.

    python _models_side.py CLIENT --base-url URL --concurrency C --prompts FILE

CLIENT: aiohttp-bare (a semaphore of C and a raw aiohttp session, no SDK, no retries: the
floor of what any Python client gets out of this server on this machine), guiforge (ModelClient.acomplete, all prompts submitted at once, the per-endpoint
limiter caps calls in flight), guiforge-static (the same with the limiter's adaptation and
the retry-after wait switched off: the fixed semaphore and exponential backoff guiforge had
before), distilabel (OpenAILLM.generate_outputs over batches of C, which is how a
distilabel task drives its LLM with input_batch_size=C), curator (curator.LLM with the
openai backend, max_concurrent_requests=C, no request/token-per-minute throttling, cache
off). Every framework keeps its own retry policy and defaults otherwise.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from importlib.metadata import version

Result = dict[str, object]


def runqueue_wait_s() -> float:
    """Seconds this process's live threads have spent runnable but waiting for a CPU
    (/proc schedstat): how much a loaded machine held the client back."""
    total = 0
    for stat in glob.glob(f"/proc/{os.getpid()}/task/*/schedstat"):
        try:
            with open(stat) as f:
                total += int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e9


class Clock:
    """Wall and CPU seconds (all threads of this process) of the timed section only, and
    the time its threads waited for a CPU."""

    def __enter__(self) -> Clock:
        self.wall0, self.cpu0, self.wait0 = time.perf_counter(), time.process_time(), runqueue_wait_s()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall_s = time.perf_counter() - self.wall0
        self.cpu_s = time.process_time() - self.cpu0
        self.runqueue_wait_s = runqueue_wait_s() - self.wait0


def run_guiforge(prompts: list[str], base_url: str, concurrency: int, adaptive: bool = True) -> Result:
    import asyncio

    import guiforge.models.base as base
    from guiforge.models import Message, ModelConfig, make_client
    from guiforge.models.limits import EndpointLimiter
    from guiforge.models.loop import run

    if not adaptive:  # what guiforge did before: fixed FIFO cap, backoff blind to retry-after
        base._retry_wait = base._backoff
        release, acquire = EndpointLimiter.release, EndpointLimiter.acquire
        EndpointLimiter.release = lambda self, outcome: release(self, "error" if outcome == "rate_limited" else outcome)
        EndpointLimiter.acquire = lambda self, retry=False: acquire(self, False)
    os.environ["BENCH_KEY"] = "dummy"
    client = make_client(ModelConfig(provider="openai", model="bench-model", base_url=base_url, api_key_env="BENCH_KEY",
                                     concurrency=concurrency, cache=False, max_tokens=64))

    async def everything() -> list[object]:
        return await asyncio.gather(*(client.acomplete([Message("user", p)]) for p in prompts), return_exceptions=True)

    with Clock() as clock:
        results = run(everything())
    failed = [r for r in results if isinstance(r, BaseException)]
    return {"wall_s": clock.wall_s, "cpu_s": clock.cpu_s, "runqueue_wait_s": clock.runqueue_wait_s, "ok": len(results) - len(failed), "failed": len(failed),
            "error": repr(failed[0])[:300] if failed else None, "version": version("openai"),
            "retries": sum(r.attempts - 1 for r in results if not isinstance(r, BaseException)),
            "limiter": client.limiter.snapshot()}


def run_aiohttp_bare(prompts: list[str], base_url: str, concurrency: int) -> Result:
    """The floor: a semaphore and aiohttp, no SDK, no retries (a 429 is a failure)."""
    import asyncio

    import aiohttp

    async def everything() -> list[object]:
        sem = asyncio.Semaphore(concurrency)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=max(100, concurrency))) as session:
            async def one(prompt: str) -> str:
                body = {"model": "bench-model", "messages": [{"role": "user", "content": prompt}], "max_tokens": 64}
                async with sem, session.post(f"{base_url}/chat/completions", json=body,
                                             headers={"authorization": "Bearer dummy"}) as resp:
                    resp.raise_for_status()
                    return (await resp.json())["choices"][0]["message"]["content"]

            return await asyncio.gather(*(one(p) for p in prompts), return_exceptions=True)

    with Clock() as clock:
        results = asyncio.run(everything())
    failed = [r for r in results if isinstance(r, BaseException)]
    return {"wall_s": clock.wall_s, "cpu_s": clock.cpu_s, "runqueue_wait_s": clock.runqueue_wait_s,
            "ok": len(results) - len(failed), "failed": len(failed),
            "error": repr(failed[0])[:300] if failed else None, "version": version("aiohttp")}


def run_distilabel(prompts: list[str], base_url: str, concurrency: int) -> Result:
    from distilabel.models.llms import OpenAILLM

    llm = OpenAILLM(model="bench-model", base_url=base_url, api_key="dummy")
    llm.load()
    inputs = [[{"role": "user", "content": p}] for p in prompts]
    ok = failed = 0
    error = None
    with Clock() as clock:
        for i in range(0, len(inputs), concurrency):
            batch = inputs[i:i + concurrency]
            try:  # a distilabel step loses the whole batch when one call exhausts its retries
                outputs = llm.generate_outputs(inputs=batch, num_generations=1, max_new_tokens=64)
                ok += sum(1 for o in outputs if o["generations"] and o["generations"][0] is not None)
                failed += sum(1 for o in outputs if not o["generations"] or o["generations"][0] is None)
            except Exception as exc:
                failed += len(batch)
                error = error or repr(exc)[:300]
    return {"wall_s": clock.wall_s, "cpu_s": clock.cpu_s, "runqueue_wait_s": clock.runqueue_wait_s, "ok": ok, "failed": failed, "error": error, "version": version("distilabel")}


def run_curator(prompts: list[str], base_url: str, concurrency: int) -> Result:
    workdir = tempfile.mkdtemp(prefix="curator-bench-")
    os.environ.update({"CURATOR_DISABLE_CACHE": "1", "CURATOR_CACHE_DIR": workdir, "TELEMETRY_ENABLED": "false",
                       "CURATOR_DISABLE_RICH_DISPLAY": "1", "CURATOR_VIEWER": "0", "HF_DATASETS_OFFLINE": "1",
                       "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    # curator counts tokens with tiktoken's cl100k_base, which tiktoken downloads on first use
    # (no internet here); litellm, a curator dependency, ships that file: point tiktoken at it.
    from importlib.util import find_spec

    litellm = find_spec("litellm")
    if litellm is not None and litellm.origin:
        os.environ.setdefault("TIKTOKEN_CACHE_DIR",
                              os.path.join(os.path.dirname(litellm.origin), "litellm_core_utils", "tokenizers"))
    from bespokelabs import curator

    class Ask(curator.LLM):  # the documented way: a row in, its prompt out; the reply kept as text
        def prompt(self, input: dict) -> str:
            return input["prompt"]

        def parse(self, input: dict, response: str) -> dict:
            return {"response": response}

    llm = Ask(model_name="bench-model", backend="openai",
                      backend_params={"base_url": base_url, "api_key": "dummy", "max_concurrent_requests": concurrency,
                                      "max_requests_per_minute": 10_000_000, "max_tokens_per_minute": 10_000_000_000,
                                      "require_all_responses": False})
    with Clock() as clock:  # curator's own children (if any) are not counted in cpu_s
        response = llm([{"prompt": p} for p in prompts], working_dir=workdir)
    dataset = getattr(response, "dataset", response)
    answers = dataset["response"] if "response" in dataset.column_names else []
    ok = sum(1 for a in answers if a)
    return {"wall_s": clock.wall_s, "cpu_s": clock.cpu_s, "runqueue_wait_s": clock.runqueue_wait_s, "ok": ok, "failed": len(prompts) - ok, "error": None, "version": version("bespokelabs-curator")}


CLIENTS: dict[str, Callable[..., Result]] = {
    "guiforge": run_guiforge,
    "guiforge-static": lambda p, u, c: run_guiforge(p, u, c, adaptive=False),
    "aiohttp-bare": run_aiohttp_bare,
    "distilabel": run_distilabel,
    "curator": run_curator,
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("client", choices=sorted(CLIENTS))
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--concurrency", type=int, required=True)
    ap.add_argument("--prompts", required=True, help="a JSON file holding a list of prompt strings")
    args = ap.parse_args()
    with open(args.prompts) as f:
        prompts = json.load(f)
    result = CLIENTS[args.client](prompts, args.base_url, args.concurrency)
    result["client"] = args.client
    print(json.dumps(result), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
