"""One plugin layer: names come from entry points (guiforge's own built-ins too), a
``module:Name`` names an object directly, and a missing module, a wrong type or a name
two packages claim is one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from guiforge.export.formats import EXPORT_FORMATS
from guiforge.harness.formats import ACTION_FORMATS
from guiforge.judge.accept import ACCEPTANCE
from guiforge.lake.tables import TABLES
from guiforge.models.providers import PROVIDERS
from guiforge.orchestration.compile_plugins import REGISTRIES
from guiforge.paths import PROJECT_ROOT
from guiforge.plugins import GROUPS, PluginError, entry_points
from guiforge.stages.base import Stage
from guiforge.stages.registry import STAGES
from guiforge.verify.registry import CHECKS, find_check


def test_every_group_has_a_registry_and_guiforge_fills_it_through_its_own_entry_points():
    assert set(REGISTRIES) == set(GROUPS)
    for group in GROUPS:
        found = entry_points(group)
        assert found, group
        assert {p.dist for p in found} == {"guiforge"}, group
    kinds = {name: STAGES.get(name) for name in STAGES.names()}
    assert all(issubclass(cls, Stage) and cls.kind == name for name, cls in kinds.items())
    assert {"personas", "worlds", "rollouts", "judge", "export", "resynthesize"} <= set(kinds)
    assert {"web", "mobile", "desktop", "tools"} <= set(REGISTRIES["guiforge.envs"].names())
    assert {"openai", "anthropic"} == set(PROVIDERS.names())
    assert {"guiforge", "qwen_vl", "uitars", "pyautogui"} <= set(ACTION_FORMATS.names())
    assert {"hf", "trl", "llamafactory"} == set(EXPORT_FORMATS.names())
    assert {"verifier", "judge", "both"} == set(ACCEPTANCE.names())
    assert {"personas", "trajectories", "steps", "exclusions"} <= set(TABLES.names())  # the set `guiforge`
    assert {"state_equals", "answer_matches", "xlsx_cell_equals"} <= set(CHECKS.names())


def test_a_fresh_editable_install_carries_the_entry_points(tmp_path):
    """What `pip install -e .` (the bootstrap) leaves in a new venv: every group, read back by
    importlib.metadata in that venv (no dependencies needed to read metadata)."""
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "v")], check=True, timeout=300)
    python = tmp_path / "v" / "bin" / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(PROJECT_ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    code = ("import importlib.metadata as m, json; print(json.dumps({g: sorted(e.name for e in "
            f"m.entry_points(group=g)) for g in {sorted(GROUPS)!r}}}))")
    found = json.loads(subprocess.run([str(python), "-c", code], cwd=tmp_path, capture_output=True, text=True,
                                      check=True, timeout=120).stdout)
    assert found == {g: sorted(p.name for p in entry_points(g)) for g in GROUPS}
    assert "task_candidates" in found["guiforge.stages"] and "web" in found["guiforge.envs"]


def test_an_installed_package_adds_names_with_its_distribution_and_version(demo):
    assert "greet" in STAGES.names()
    plugin = STAGES.plugin("greet")
    assert (plugin.dist, plugin.version, plugin.value) == ("seamsdemo", "0.3.0", "seamsdemo:GreetStage")
    assert STAGES.get("greet").kind == "greet"
    assert STAGES.get("seamsdemo:GreetStage") is STAGES.get("greet")  # module:Name, the same class
    # a single check function registers beside guiforge's set, and the verifier worker finds it
    assert find_check("shouts") is not None and find_check("state_equals") is not None


@pytest.mark.parametrize("ref, expect", [
    ("gret", "unknown stage kind 'gret'; installed: "),
    ("nosuchpkg.stages:Greet", "no module named 'nosuchpkg'"),
    ("seamsdemo:Greet", "module 'seamsdemo' has no 'Greet'"),
    ("broken", "is the function 'not_a_stage', not a Stage subclass"),
    ("seamsdemo:GREETINGS", "is a TableSpec object, not a Stage subclass"),
])
def test_bad_names_are_one_line(demo, ref, expect):
    with pytest.raises(PluginError) as err:
        STAGES.get(ref)
    assert expect in str(err.value)
    assert "\n" not in str(err.value)


def test_two_packages_claiming_one_name_is_an_error_naming_both(tmp_path, demo, on_path, distribution):
    on_path(distribution(tmp_path / "other", "clashing", "1.2", "from seamsdemo import GreetStage\n",
                              "[guiforge.stages]\ngreet = clashing:GreetStage\n"))
    with pytest.raises(PluginError) as err:
        STAGES.get("greet")
    message = str(err.value)
    assert "'greet' is registered twice in guiforge.stages" in message
    assert "seamsdemo 0.3.0" in message and "clashing 1.2" in message


def test_guiforge_plugins_lists_groups_with_distribution_and_version(demo):
    done = subprocess.run([sys.executable, "-m", "guiforge.cli", "plugins", "--group", "guiforge.stages", "--check"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, env=_env())
    text = done.stdout + done.stderr
    assert "greet" in text and "seamsdemo" in text and "0.3.0" in text, text
    assert "personas" in text and "guiforge" in text
    # the broken entry point is named, and the command fails
    assert done.returncode != 0 and "not a Stage subclass" in text.replace("\n", " ").replace("│", ""), text


def _env() -> dict:
    import os

    return {**os.environ, "COLUMNS": "300"}
