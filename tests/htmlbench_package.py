"""Installing the worked example (examples/guiforge-htmlbench) into this venv with pip, the
way a user would, and leaving the venv as it was afterwards (reinstalled from examples/ if
it was installed before, else uninstalled: other tests list the installed plugins)."""

from __future__ import annotations

import contextlib
import importlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from guiforge.paths import PROJECT_ROOT
from guiforge.plugins import refresh

EXAMPLE = PROJECT_ROOT / "examples" / "guiforge-htmlbench"


def pip_install(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", *args], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def _installed() -> bool:
    return subprocess.run([sys.executable, "-m", "pip", "show", "-q", "guiforge-htmlbench"],
                          capture_output=True).returncode == 0


def install(source: Path) -> None:
    """A regular (not editable) install from a copy of ``source``: importable in this process
    at once (an editable install's finder only loads at interpreter start-up), and nothing
    is built inside the source folder."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / source.name
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "build"))
        pip_install("--force-reinstall", str(copy))
    importlib.invalidate_caches()
    for name in [m for m in sys.modules if m == "guiforge_htmlbench" or m.startswith("guiforge_htmlbench.")]:
        del sys.modules[name]  # a new version's modules, not the last one's
    refresh()  # this process sees the new entry points too


@contextlib.contextmanager
def installed(source: Path = EXAMPLE) -> Iterator[Path]:
    """The example installed from ``source`` while the block runs."""
    before = _installed()
    install(source)
    try:
        yield source
    finally:
        if before:
            install(EXAMPLE)
        else:
            subprocess.run([sys.executable, "-m", "pip", "uninstall", "-y", "-q", "guiforge-htmlbench"],
                           capture_output=True, timeout=120)
        refresh()
