"""What a shard's rows depend on besides its config: the code that makes them and the data
files it reads. Both enter the shard fingerprint, so editing either re-runs the shard.

A stage declares ``code`` (module or package names; empty means the whole ``guiforge``
package and the schemas, the safe default for a stage that declares nothing) and
``data_files()`` (scenario templates, persona seeds, cards...). Files are hashed by content,
named relative to their package or the project, and cached by (mtime, size) per process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from pathlib import Path

from guiforge.paths import PROJECT_ROOT

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
