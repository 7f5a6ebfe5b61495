"""flows/, schemas/ and preparers/ install under the guiforge namespace only."""

from __future__ import annotations

import subprocess
import sys


def test_generic_top_level_names_are_not_installed(tmp_path):
    code = ("import importlib.util as u; import guiforge.flows.dag, guiforge.schemas, guiforge.preparers;"
            "print([n for n in ('flows', 'schemas', 'preparers') if u.find_spec(n)])")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
