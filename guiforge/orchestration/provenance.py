"""What a shard's rows depend on besides its config: the code that makes them and the data
files it reads. Both enter the shard fingerprint, so editing either re-runs the shard.
Below them, what a whole run records about itself for the researcher (``record_run``) and
the time each stage session took (``record_stage_session``): lake/runlog.py stores both.

A stage declares ``code`` (module or package names; empty means the whole ``guiforge``
package and the schemas, the safe default for a stage that declares nothing) and
``data_files()`` (scenario templates, persona seeds, cards...). Files are hashed by content,
named relative to their package or the project, and cached by (mtime, size) per process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import platform
import subprocess
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from guiforge import __version__
from guiforge.lake.runlog import write_provenance, write_stage_session
from guiforge.lake.store import Lake
from guiforge.paths import PROJECT_ROOT

if TYPE_CHECKING:
    from guiforge.config import Pipeline
    from guiforge.orchestration.context import RunContext

ALWAYS = ("guiforge.stages.base", "guiforge.lake", "guiforge.orchestration.engine", "guiforge.schemas")
EVERYTHING = ("guiforge", "guiforge.schemas")

_cache: dict[Path, tuple[int, int, str]] = {}
_lock = threading.Lock()


def file_sha256(path: Path) -> str:
    st = path.stat()
    with _lock:
        hit = _cache.get(path)
    if hit and hit[:2] == (st.st_mtime_ns, st.st_size):
        return hit[2]
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with _lock:
        _cache[path] = (st.st_mtime_ns, st.st_size, digest)
    return digest


def _module_files(name: str) -> tuple[Path, list[Path]]:
    """(the folder names are taken relative to, the files of module or package ``name``)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not (spec.origin or spec.submodule_search_locations):
        raise ValueError(f"code fingerprint: no module {name!r}")
    if spec.submodule_search_locations:  # a package: every file under it (code and assets)
        folder = Path(list(spec.submodule_search_locations)[0])
        files = [p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                 and p.suffix not in (".pyc", ".pyo")]
        return folder.parent, sorted(files)
    origin = Path(spec.origin)
    return origin.parent, [origin]


def code_fingerprint(modules: tuple[str, ...]) -> str:
    """sha256 over the source files (and package assets) of ``modules``."""
    h = hashlib.sha256()
    seen: set[Path] = set()
    for name in sorted(set(modules or EVERYTHING) | set(ALWAYS)):
        base, files = _module_files(name)
        for f in files:
            if f in seen:
                continue
            seen.add(f)
            h.update(f"{f.relative_to(base).as_posix()}\0{file_sha256(f)}\n".encode())
    return h.hexdigest()[:16]


def data_fingerprint(files: list[Path]) -> dict[str, str]:
    """{file name relative to the project (or absolute outside it): sha256}."""
    out = {}
    for f in sorted({Path(p).resolve() for p in files}):
        try:
            name = f.relative_to(PROJECT_ROOT.resolve()).as_posix()
        except ValueError:
            name = str(f)
        out[name] = file_sha256(f) if f.is_file() else "missing"
    return out


# -- a run's provenance and its stages' time ------------------------------------------------

# The prompt templates a role renders, by package folder (roles not listed write their
# prompts in code: the lake's prompt_hash columns say which prompts they sent).
PROMPT_TEMPLATES = {"teacher": ("guiforge.harness", "prompts"), "judge": ("guiforge.judge", "prompts")}
LIBRARIES = ("duckdb", "pyarrow", "prefect", "playwright", "pydantic", "openai", "anthropic", "plotly")


def cpu_seconds() -> float:
    """CPU time of this process and of the children it has reaped (verifier workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def record_stage_session(ctx: RunContext, summary, started_at: float, cpu_s: float) -> None:
    """One timing record for a session of a stage that ran shards (runlog.py)."""
    workers = ctx.pipeline.config.workers
    write_stage_session(ctx.lake, ctx.run_id, {
        "stage": summary.stage, "started_at": started_at, "finished_at": time.time(),
        "wall_s": summary.seconds, "cpu_s": round(cpu_s, 3), "workers": workers, "planned": summary.planned,
        "ran": summary.ran, "skipped": summary.skipped, "rows": summary.rows, "interrupted": summary.interrupted})


def _file_sha256(source: str) -> str | None:
    path = Path(source)
    return file_sha256(path) if path.is_file() else None


def _git() -> dict[str, Any]:
    """The checkout's commit and whether it had uncommitted changes (None outside git)."""
    try:
        head = subprocess.run(["git", "-C", str(PROJECT_ROOT), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode:
            return {"commit": None}
        dirty = subprocess.run(["git", "-C", str(PROJECT_ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=20)
        return {"commit": head.stdout.strip(), "dirty": bool(dirty.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None}


def _templates_sha(package: str, folder: str) -> str:
    spec = importlib.util.find_spec(package)
    base = Path(list(spec.submodule_search_locations)[0]) / folder
    h = hashlib.sha256()
    for f in sorted(base.glob("*.j2")):
        h.update(f"{f.name}\0{file_sha256(f)}\n".encode())
    return h.hexdigest()[:16]


def _plugins() -> list[dict[str, str | None]]:
    """Every entry point in a guiforge.* group, with the distribution that provides it."""
    out = []
    for dist in metadata.distributions():
        for ep in dist.entry_points:
            if ep.group.startswith("guiforge."):
                out.append({"group": ep.group, "name": ep.name, "value": ep.value,
                            "distribution": dist.metadata["Name"], "version": dist.version})
    return sorted(out, key=lambda p: (p["group"], p["name"]))


def _library_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def run_provenance(pipeline: Pipeline) -> dict[str, Any]:
    """What made a run's rows: the pipeline file and its config, the seed, every model role
    (identity and prices, never a key) with its prompt templates, the code (version,
    fingerprint, git commit) and the plugins and libraries installed."""
    models = {}
    for role in sorted(pipeline.model_roles()):
        model = pipeline.model(role)
        models[role] = {"provider": model.provider, "model": model.model, "identity": model.identity(),
                        "prices": model.prices.model_dump(), "action_format": model.action_format}
        if role in PROMPT_TEMPLATES:
            models[role]["prompt_templates_sha"] = _templates_sha(*PROMPT_TEMPLATES[role])
    return {
        "run_id": pipeline.run_id,
        "pipeline": {"name": pipeline.config.name, "source": pipeline.source,
                     "file_sha256": _file_sha256(pipeline.source), "fingerprint": pipeline.fingerprint,
                     "config": pipeline.to_dict()},
        "seed": pipeline.config.seed,
        "stages": [{"name": s.name, "kind": s.kind, "version": s.version, "model_roles": s.model_roles(),
                    "config": s.config.model_dump(mode="json")} for s in pipeline.stages],
        "models": models,
        "code": {"version": __version__, "fingerprint": code_fingerprint(EVERYTHING), **_git()},
        "plugins": _plugins(),
        "libraries": _library_versions(),
        "python": platform.python_version(),
    }


def record_run(lake: Lake, pipeline: Pipeline) -> None:
    """Write the run's provenance into the lake (runlog.py) as a run session starts."""
    write_provenance(lake, pipeline.run_id, run_provenance(pipeline))
