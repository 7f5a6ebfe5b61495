"""The layers hold: `lint-imports` keeps the contract in pyproject.toml (lake/schemas at the
bottom, cli at the top), and it sees flows/, schemas/ and preparers/ where they install."""

from __future__ import annotations

import subprocess
import sys

from guiforge.paths import PROJECT_ROOT

SCRIPT = PROJECT_ROOT / "scripts" / "lint_imports.py"


def lint(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def test_the_layer_contract_is_kept():
    done = lint()
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "1 kept, 0 broken" in done.stdout


def test_the_mapped_folders_are_linted_as_guiforge_packages(tmp_path):
    config = tmp_path / "contract.ini"
    config.write_text("[importlinter]\nroot_package = guiforge\n\n"
                      "[importlinter:contract:probe]\nname = preparers may not read worlds\ntype = forbidden\n"
                      "source_modules = guiforge.preparers\nforbidden_modules = guiforge.worlds\n")
    done = lint(str(config))
    assert done.returncode != 0
    assert "guiforge.preparers.web_apps -> guiforge.worlds" in done.stdout, done.stdout[-3000:]
