from __future__ import annotations

from pathlib import Path

import pytest
from tools_helpers import make_world

from guiforge.envs.tools import REGISTRY, ToolContext
from guiforge.worlds.model import World


@pytest.fixture
def world() -> World:
    return make_world()


@pytest.fixture
def ctx(tmp_path: Path, world: World) -> ToolContext:
    ws = tmp_path / "workspace"
    ws.mkdir()
    return ToolContext(workspace=ws, world=world, available=dict(REGISTRY))
