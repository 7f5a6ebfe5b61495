"""The kill battery: ``guiforge run`` of the smoke pipeline SIGKILLed (its whole process
group) or SIGTERMed (its main process, as a scheduler does: it must exit 143 with one line)
at N seeded moments spread over every stage, rerun after each kill, and the last run let
finish; then every table (and every exported dataset) must equal an uninterrupted run's,
row for row with image hashes (guiforge.batteries.tables), with no duplicate row, no
temporary file left in the lake or the exports, and no process of any killed run (browser,
LibreOffice, Prefect server, verifier worker) left alive.

Moments are chosen on the uninterrupted run's own progress, never by sleeping: its commits
(manifest entries) and the CPU time of its main process between them (a clock that does not
run while the machine is busy with something else). A moment is "``c`` shards committed, then
``d`` more CPU seconds of the run"; each stage gets at least one, the rest go by the CPU time
each stage takes. A resumed run counts ``d`` from when it holds the run's lock and has
reached ``c`` commits, so a kill lands in the stage it was chosen in, not in the start-up.

``bench/kill_battery.py`` runs it and prints the JSON summary; ``tests/test_kill_battery.py``
runs the CI variant (a smaller pipeline, fewer kills) and, with --battery, the full one.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from guiforge.batteries.procs import TreeWatch, cpu_s, kill_all, survivors
from guiforge.batteries.tables import digests, duplicates, export_digests
from guiforge.lake.lock import lock_path
from guiforge.lake.store import MANIFEST_DIR, TMP_MARK, Lake
from guiforge.orchestration.compile import load_pipeline
from guiforge.paths import PROJECT_ROOT

SMOKE = PROJECT_ROOT / "data" / "pipelines" / "smoke.yaml"
TAG_ENV = "GUIFORGE_KILL_BATTERY"
POLL_S = 0.02


SIZES = ("full", "short", "ci")


def battery_pipeline(lake: str, size: str = "full") -> dict[str, Any]:
    """The smoke pipeline (data/pipelines/smoke.yaml) with offline models, writing ``lake``.
    ``short``: a few personas, web and tools only, a handful of rollouts, every stage kept;
    ``ci``: two personas' worlds and the skills only (no browser), the CI variant."""
    config = yaml.safe_load(SMOKE.read_text())
    config["lake"] = lake
    config["models"] = {role: {"provider": "offline"} for role in config["models"]}
    stages = config["stages"]
    if size in ("short", "ci"):
        config["name"] = f"smoke-kills-{size}"
        stages["personas"] = {"count": 2, "shard_size": 1}
        stages["task_candidates"] = {"per_world": 1, "domains": ["web", "tools"]}
        stages["task_gates"] = {"concurrency": 2, "shard_size": 1}
        stages["rollouts"] = {**stages["rollouts"], "samples": 2, "tasks": 2, "tasks_per_shard": 1}
        stages["rl_select"] = {"budget": 2, "min_valid": 1}
    if size == "ci":
        config["stages"] = {k: stages[k] for k in ("personas", "worlds", "skills")}
    return config


@dataclass
class Moment:
    commits: int  # shards of the run committed before it
    after_cpu_s: float  # then this much more CPU time of the run's main process
    stage: str  # the stage the uninterrupted run was in at that point
    signal: str = "SIGKILL"  # SIGKILL to the process group, or SIGTERM to the run (a scheduler's stop)


@dataclass
class Timeline:
    """The uninterrupted run: the stage and main-process CPU time of each commit, in order."""

    stages: list[str] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    total_cpu_s: float = 0.0


def choose_moments(timeline: Timeline, n: int, seed: int, term_share: float = 0.0) -> list[Moment]:
    """``n`` moments over the run: every stage (a stretch of CPU time ending at its last
    commit) gets one, the rest go to stages by their CPU time; seeded places within each.
    Fewer moments than stages: a seeded choice of stages, one each. A seeded ``term_share``
    of them are SIGTERMs, the rest SIGKILLs."""
    rng = random.Random(seed)
    order = list(dict.fromkeys(timeline.stages))
    ends = {s: max(t for st, t in zip(timeline.stages, timeline.cpu, strict=True) if st == s) for s in order}
    spans, start = {}, 0.0
    for s in order:
        spans[s] = (start, max(ends[s], start))
        start = spans[s][1]
    spans["finish"] = (start, max(timeline.total_cpu_s, start))  # the catalog and report after the last commit
    order.append("finish")
    # every stage once (a seeded few of them when there are fewer kills than stages)
    firsts = set(order) if n >= len(order) else set(rng.sample(order, n))
    share = {s: int(s in firsts) for s in order}
    rest = n - sum(share.values())
    total = sum(b - a for a, b in spans.values()) or 1.0
    quotas = {s: rest * (spans[s][1] - spans[s][0]) / total for s in order}
    for s in order:
        share[s] += int(quotas[s])
    for s in sorted(order, key=lambda s: quotas[s] - int(quotas[s]), reverse=True)[:n - sum(share.values())]:
        share[s] += 1
    moments = []
    for s in order:
        a, b = spans[s]
        for point in sorted(rng.uniform(a, b) for _ in range(share[s])):
            done = sum(1 for t in timeline.cpu if t <= point)
            base = timeline.cpu[done - 1] if done else 0.0
            moments.append(Moment(done, round(point - base, 3), s))
    terms = set(random.Random(f"{seed}-term").sample(range(len(moments)), round(term_share * len(moments))))
    return [Moment(m.commits, m.after_cpu_s, m.stage, "SIGTERM") if i in terms else m
            for i, m in enumerate(moments)]


@dataclass
class Kill:
    moment: Moment
    commits: int  # committed when it landed
    left: list[str]  # processes of the killed run still alive afterwards
    exit_code: int | None = None  # of a SIGTERMed run: 143 with one line (SIGKILL: -9)


@dataclass
class KillResult:
    seconds: float = 0.0
    reference_seconds: float = 0.0
    kills: list[Kill] = field(default_factory=list)
    tables: dict[str, bool] = field(default_factory=dict)  # table (or export folder) -> equal to the reference
    problems: list[str] = field(default_factory=list)

    def summary(self, n: int) -> dict[str, Any]:
        by_stage: dict[str, int] = {}
        by_signal: dict[str, int] = {}
        for k in self.kills:
            by_signal[k.moment.signal] = by_signal.get(k.moment.signal, 0) + 1
        for k in self.kills:
            by_stage[k.moment.stage] = by_stage.get(k.moment.stage, 0) + 1
        equal = sum(self.tables.values())
        return {"bench": "kill_battery",
                "figures": {"kills": len(self.kills), "kills_asked": n, "kills_by_stage": by_stage,
                            "kills_by_signal": by_signal,
                            "seconds": round(self.seconds, 1), "reference_seconds": round(self.reference_seconds, 1),
                            "tables_compared": len(self.tables), "tables_equal": equal,
                            "processes_left": sum(len(k.left) for k in self.kills),
                            "moments": [[k.moment.stage, k.moment.signal, k.moment.commits, k.moment.after_cpu_s, k.commits]
                                        for k in self.kills],
                            "problems": self.problems[:20]},
                "ratios": {"tables_identical": round(equal / len(self.tables), 4) if self.tables else None,
                           "battery_seconds_per_reference_run": round(self.seconds / self.reference_seconds, 2)
                           if self.reference_seconds else None}}


class Runner:
    """Starts ``guiforge run`` on one pipeline file in a process group of its own."""

    def __init__(self, workdir: Path, config: Path, lake: Path, run_id: str, executor: str):
        self.workdir, self.config, self.lake, self.run_id, self.executor = workdir, config, lake, run_id, executor
        self.tag = uuid.uuid4().hex
        self.env = {**os.environ, TAG_ENV: self.tag, "PREFECT_HOME": str(workdir / "prefect")}
        self.runs = 0

    def start(self) -> subprocess.Popen:
        self.runs += 1
        log = (self.workdir / f"run-{self.runs:02d}.log").open("w")
        return subprocess.Popen([sys.executable, "-m", "guiforge.cli", "run", str(self.config), "--lake",
                                 str(self.lake), "--executor", self.executor], cwd=PROJECT_ROOT, env=self.env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def log(self) -> str:
        return (self.workdir / f"run-{self.runs:02d}.log").read_text(errors="replace")

    def log_tail(self) -> str:
        return self.log()[-1500:]

    def commits(self) -> list[Path]:
        """Committed manifest entries of the run, oldest first."""
        entries = [p for p in (self.lake / MANIFEST_DIR / f"run={self.run_id}").glob("*/*.json")
                   if TMP_MARK not in p.name]
        return sorted(entries, key=lambda p: p.stat().st_mtime_ns)

    def holds_lock(self, pid: int) -> bool:
        try:
            return json.loads(Path(lock_path(Lake(self.lake), self.run_id)).read_text()).get("pid") == pid
        except (OSError, ValueError):
            return False


def record_reference(runner: Runner, timeout_s: float) -> tuple[Timeline, int]:
    """Run to the end, noting each commit's stage and the main process's CPU time then."""
    timeline, tick = Timeline(), threading.Event()
    proc = runner.start()
    seen: set[Path] = set()
    until = time.monotonic() + timeout_s
    while proc.poll() is None and time.monotonic() < until:
        cpu = cpu_s(proc.pid)
        for entry in runner.commits():
            if entry not in seen:
                seen.add(entry)
                timeline.stages.append(entry.parent.name)
                timeline.cpu.append(cpu)
                timeline.total_cpu_s = cpu
        timeline.total_cpu_s = max(timeline.total_cpu_s, cpu)
        tick.wait(POLL_S)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    return timeline, proc.wait()


def run_until(runner: Runner, moment: Moment, timeout_s: float) -> tuple[Kill | None, str | None]:
    """Start a run and SIGKILL its process group at ``moment``: the kill, or what went wrong."""
    proc = runner.start()
    watch = TreeWatch(proc.pid)
    tick = threading.Event()
    mark: float | None = None
    target = moment.commits
    until = time.monotonic() + timeout_s
    try:
        while proc.poll() is None:
            if time.monotonic() > until:
                return None, f"run {runner.runs} never reached {moment}"
            done = len(runner.commits())
            if mark is None and done >= target and runner.holds_lock(proc.pid):
                target = done  # a kill that landed past this moment moves it to where the run is
                mark = cpu_s(proc.pid)
            if mark is not None and (done > target or cpu_s(proc.pid) - mark >= moment.after_cpu_s):
                watch.look()
                problem = _stop(proc, moment.signal, runner, timeout_s)
                watch.stop()
                left = survivors(watch.seen, runner.tag)
                kill_all(left)
                return Kill(moment, done, [f"{s.pid} {s.name}" for s in left], proc.returncode), problem
            tick.wait(POLL_S)
        return None, f"run {runner.runs} ended (exit {proc.returncode}) before {moment}: {runner.log_tail()}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        watch.stop()


def _stop(proc: subprocess.Popen, signame: str, runner: Runner, timeout_s: float) -> str | None:
    """SIGKILL the run's process group, or SIGTERM its main process and wait for it to stop
    on its own: exit 143 with one last line "interrupted by SIGTERM ..." (what went wrong)."""
    if signame == "SIGKILL":
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return f"run {runner.runs} did not stop within {timeout_s:.0f}s of SIGTERM"
    output = runner.log()
    lines = [line for line in output.splitlines() if line.strip()]
    if code == 0:  # it finished as the signal came: nothing was interrupted
        return None
    if code != 143 or not lines or not lines[-1].startswith("interrupted by SIGTERM") or "Traceback" in output:
        return f"run {runner.runs} exited {code} on SIGTERM: {runner.log_tail()[-600:]}"
    return None


def run_battery(workdir: Path, kills: int = 20, seed: int = 7, size: str = "full", executor: str = "prefect",
                run_timeout_s: float = 3600.0, term_share: float = 0.25) -> KillResult:
    """The uninterrupted reference, then the killed and resumed run; compare and check."""
    workdir.mkdir(parents=True, exist_ok=True)
    result = KillResult()
    started = time.monotonic()
    runners = {}
    for name in ("reference", "killed"):
        lake = workdir / name / "lake"
        config = workdir / f"{name}.yaml"
        config.write_text(yaml.safe_dump(battery_pipeline(str(lake), size), sort_keys=False))
        runners[name] = Runner(workdir / name, config, lake, _run_id(config), executor)
        (workdir / name).mkdir(exist_ok=True)
    timeline, code = record_reference(runners["reference"], run_timeout_s)
    result.reference_seconds = time.monotonic() - started
    if code != 0:
        result.problems.append(f"the reference run exited {code}: {runners['reference'].log_tail()}")
        return result
    started = time.monotonic()
    killed = runners["killed"]
    for moment in choose_moments(timeline, kills, seed, term_share):
        kill, problem = run_until(killed, moment, run_timeout_s)
        if kill:
            result.kills.append(kill)
        if problem:
            result.problems.append(problem)
            break
        if kill.left:
            result.problems.append(f"kill {len(result.kills)} ({moment.stage}) left {kill.left}")
    _finish(killed, run_timeout_s, result)
    result.seconds = time.monotonic() - started
    _compare(Lake(runners["reference"].lake), Lake(killed.lake), killed, result)
    return result


def _run_id(config: Path) -> str:
    return load_pipeline(config).run_id


def _finish(runner: Runner, timeout_s: float, result: KillResult) -> None:
    """The last run, to the end: exit 0, and nothing of it alive afterwards."""
    proc = runner.start()
    watch = TreeWatch(proc.pid)
    try:
        code = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        code = proc.wait()
    watch.stop()
    if code != 0:
        result.problems.append(f"the last run exited {code}: {runner.log_tail()}")
    left = survivors(watch.seen, runner.tag)
    kill_all(left)
    if left:
        result.problems.append(f"the finished run left {[f'{s.pid} {s.name}' for s in left]}")


def _compare(reference: Lake, lake: Lake, runner: Runner, result: KillResult) -> None:
    want, got = digests(reference), digests(lake)
    want.update(export_digests(reference))
    got.update(export_digests(lake))
    for name in sorted(set(want) | set(got)):
        result.tables[name] = want.get(name) == got.get(name)
        if not result.tables[name]:
            result.problems.append(f"{name}: {got.get(name)} after the kills, {want.get(name)} uninterrupted")
    for table, extra in duplicates(lake).items():
        result.problems.append(f"{table}: {extra} duplicate rows")
    left = [str(p) for root in (runner.lake, runner.lake.parent / "exports") for p in root.rglob(f"*{TMP_MARK}*")]
    if left:
        result.problems.append(f"{len(left)} temporary files left, e.g. {left[0]}")
    entries = len(runner.commits())
    reference_entries = len(list((Path(reference.root) / MANIFEST_DIR).glob("run=*/*/*.json")))
    if entries != reference_entries:
        result.problems.append(f"{entries} manifest entries, the uninterrupted run has {reference_entries}")
    check = subprocess.run([sys.executable, "-m", "guiforge.cli", "lake", "check", "--lake", str(runner.lake)],
                           cwd=PROJECT_ROOT, capture_output=True, text=True)
    if check.returncode != 0:
        result.problems.append(f"lake check: {check.stdout.strip()[-500:]}")
