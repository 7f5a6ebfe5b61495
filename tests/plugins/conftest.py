"""An outside package as pip leaves it on disk: its module and a ``.dist-info`` with
METADATA and entry_points.txt, on a folder put on ``sys.path`` (and on PYTHONPATH for
subprocesses). importlib.metadata finds it exactly as it finds an installed wheel."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from guiforge.plugins import refresh

DEMO = '''
"""seamsdemo: a stage kind with a table of its own, a check, and things of the wrong type."""
import pyarrow as pa

from guiforge.lake.tables import table
from guiforge.stages.base import ShardPlan, Stage, StageConfig

GREETINGS = table("greetings", "One greeting per persona", ("persona_id",),
                  [pa.field("persona_id", pa.string(), nullable=False), pa.field("text", pa.string())])


class GreetConfig(StageConfig):
    salutation: str = "Hello"


class GreetStage(Stage):
    """Reads personas, writes one greeting each into a table this package declares."""

    kind = "greet"
    config_model = GreetConfig
    tables = (GREETINGS,)

    def inputs(self):
        return ["personas"]

    def outputs(self):
        return ["greetings"]

    def reads(self):
        return {"personas": ["persona_id", "name"]}

    def plan(self, ctx):
        return [ShardPlan(key=f"greet<{s.fingerprint}", params={"path": s.path}, inputs=[s.fingerprint])
                for s in ctx.input_shards("personas")]

    def run(self, ctx, shard):
        rows = ctx.lake.read_shard(shard.params["path"], columns=["persona_id", "name"]).to_pylist()
        return {"greetings": [{"persona_id": r["persona_id"], "text": f"{self.config.salutation}, {r['name']}"}
                              for r in rows]}


class MissesColumn(GreetStage):
    kind = "misses_column"

    def reads(self):
        return {"personas": ["persona_id", "nickname"]}


class NoSchema(GreetStage):
    kind = "no_schema"
    tables = ()

    def outputs(self):
        return ["salutations"]


class PartialTrajectories(Stage):
    """Writes trajectories without the harness the export reads."""

    kind = "partial_trajectories"
    config_model = StageConfig

    def inputs(self):
        return []

    def outputs(self):
        return ["trajectories", "steps", "images", "tasks", "worlds"]

    def writes(self):
        return {"trajectories": ["trajectory_id", "task_id", "sample_index", "success", "score", "env_failure"]}

    def plan(self, ctx):
        return []

    def run(self, ctx, shard):
        return {}


def shouts(state, text):
    return text.upper() == (state.answer or "")


def not_a_stage():
    return None
'''

ENTRY_POINTS = '''
[guiforge.stages]
greet = seamsdemo:GreetStage
misses_column = seamsdemo:MissesColumn
no_schema = seamsdemo:NoSchema
partial_trajectories = seamsdemo:PartialTrajectories
broken = seamsdemo:not_a_stage

[guiforge.checks]
shouts = seamsdemo:shouts
'''


def make_distribution(root: Path, name: str, version: str, module: str, entry_points: str) -> Path:
    """``root`` holding the package ``name`` and its dist-info, as pip installs it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{name}.py").write_text(textwrap.dedent(module))
    info = root / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points).lstrip())
    (info / "top_level.txt").write_text(name + "\n")
    return root


@pytest.fixture
def on_path(monkeypatch):
    """Put a folder of distributions on sys.path and PYTHONPATH; forget it afterwards."""
    def add(root: Path) -> Path:
        monkeypatch.syspath_prepend(str(root))
        monkeypatch.setenv("PYTHONPATH", str(root))
        refresh()
        return root

    yield add
    refresh()  # monkeypatch restores sys.path after this: drop what was found there
    sys.modules.pop("seamsdemo", None)
    sys.modules.pop("clashing", None)


@pytest.fixture
def distribution():
    """make_distribution, for a test that needs a second package."""
    return make_distribution


@pytest.fixture
def demo(tmp_path, on_path) -> Path:
    return on_path(make_distribution(tmp_path / "site", "seamsdemo", "0.3.0", DEMO, ENTRY_POINTS))
