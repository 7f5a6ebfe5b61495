"""Run import-linter's `lint-imports` (the layer contract in pyproject.toml) over guiforge as
it is imported, with flows/, schemas/ and preparers/ inside it.

Those three folders sit at the repo root and install as guiforge.flows, guiforge.schemas and
guiforge.preparers (setup.py maps them); import-linter finds modules by walking the
package's folder, where they are not. So the lint runs on a throwaway folder holding a
`guiforge` made of links: the package's own entries plus the three mapped folders.

    .venv/bin/python scripts/lint_imports.py [CONFIG]   (make test runs it; CONFIG: pyproject.toml)
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def mapped_folders() -> dict[str, str]:
    """setup.py's MAPPED: {"guiforge.flows": "flows", ...}, read without running setup()."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "MAPPED" for t in node.targets):
            return ast.literal_eval(node.value)
    raise SystemExit("scripts/lint_imports.py: setup.py has no MAPPED = {...}")


def main(argv: list[str]) -> int:
    config = Path(argv[0]).resolve() if argv else ROOT / "pyproject.toml"
    lint = Path(sys.executable).parent / "lint-imports"
    with tempfile.TemporaryDirectory(prefix="guiforge-lint-") as tmp:
        package = Path(tmp) / "guiforge"
        package.mkdir()
        for entry in (ROOT / "guiforge").iterdir():
            if entry.name != "__pycache__":
                (package / entry.name).symlink_to(entry)
        for name, folder in mapped_folders().items():
            (package / name.split(".", 1)[1]).symlink_to(ROOT / folder)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        # lint-imports puts its working folder first on sys.path: there `guiforge` is the view
        return subprocess.run([str(lint), str(config), "--no-cache"], cwd=tmp, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
