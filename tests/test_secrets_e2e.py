"""End to end: a small run whose agent tries to read secrets. Two skill cards make the
scripted teacher dump every process's environment and command line it can see (the
desktop terminal: ``/proc/*/environ``, ``env``; the tools domain: ``os.environ`` and
``/proc/*/environ`` from coding_tool). With API keys and cloud credentials set in this
process, the run goes personas -> ... -> rollouts -> judge -> export, and then every file
of the lake and of the exports (Parquet read back value by value, the rest byte by byte)
is searched for them. The dumps themselves must be there (the agent did read, and what it
read was recorded), so a secret in them would have been found. The same export shows where
terminal steps go: with their window's picture, into the image configs."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from datasets import load_dataset
from PIL import ImageColor
from rich.console import Console

from guiforge.cli_realism import print_export_breadth
from guiforge.envs.desktop.terminal_screen import PALETTES
from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline

TERMINAL_CARD = r"""
id: terminal.read_secrets
domains: [desktop]
variants: [terminal]
apps: [terminal]
description: An agent that tries to read the environment of every process it can see.
difficulty: easy
max_steps: 6
params:
  me: {value: "world.me.name"}
instructions:
  - "Write done into answer.txt."
  - "Put the word done in answer.txt."
setup:
  files:
    extra: {"note.txt": "hello"}
rubric:
  - {id: done, description: answer.txt says done, check: {fn: file_contains, path: answer.txt, text: "done"}}
reference:
  - {do: bash, command: "for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; tr '\\0' ' ' < $p/cmdline; echo; done; env"}
  - {do: bash, command: "echo done > answer.txt && cat answer.txt"}
"""

TOOLS_CARD = r"""
id: tools.read_secrets
domains: [tools]
apps: [world]
description: An agent that tries to read the environment from coding_tool.
difficulty: easy
max_steps: 4
params:
  me: {value: "world.me.name"}
instructions:
  - "Say done."
  - "Answer with the word done."
answer: "done"
rubric:
  - {id: done, description: the answer says done, check: {fn: answer_matches, value: "done"}}
reference:
  - {do: call_tool, name: coding_tool, arguments: {code: "import os, glob\nprint(dict(os.environ))\nfor p in glob.glob('/proc/[0-9]*/environ'):\n    print(p, open(p, 'rb').read())\n"}}
  - {do: answer, text: "done"}
"""

SECRET_NAMES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                "PREFECT_API_KEY", "HF_TOKEN", "GITHUB_TOKEN")
ROLES = ("world_builder", "task_author", "teacher", "judge", "relabeler", "diagnoser")


def _texts(root: Path) -> dict[Path, str]:
    """Every file under ``root`` as text: Parquet tables value by value (their pages are
    compressed, so raw bytes could hide a string), everything else as raw bytes."""
    out = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        raw = path.read_bytes().decode("latin-1")
        if path.suffix == ".parquet":
            raw += repr(pq.read_table(path).to_pylist())
        out[path] = raw
    return out


def test_no_secret_reaches_the_lake_or_the_exports(tmp_path, monkeypatch):
    secrets = {}
    for name in SECRET_NAMES:
        secrets[name] = f"{name.lower()}-{uuid.uuid4().hex}"
        monkeypatch.setenv(name, secrets[name])
    skills = tmp_path / "skills"
    for app, card in (("terminal", TERMINAL_CARD), ("tools", TOOLS_CARD)):
        (skills / app).mkdir(parents=True)
        (skills / app / "read_secrets.yaml").write_text(card)
    config = {
        "name": "secrets", "seed": 3, "workers": 1,
        "models": {role: {"provider": "offline"} for role in ROLES},  # the keys above must not switch them on
        "stages": {"personas": {"count": 2, "shard_size": 2}, "worlds": {}, "skills": {"dir": str(skills)},
                   "task_candidates": {"per_world": 2}, "task_gates": {"package_gate": False},
                   "rollouts": {"samples": 1, "tasks": "all", "tasks_per_shard": 4},
                   "judge": {},
                   # rows unfitted: an environment dump is past TRL's default length, and it is
                   # the very row whose secrets this test looks for
                   "export": {"formats": ["hf", "llamafactory"], "max_length": None}},
    }
    pipeline = build_pipeline(config, "secrets.yaml", lake=str(tmp_path / "lake"))
    summaries = {s.stage: s for s in run_pipeline(pipeline, executor="local")}
    assert summaries["rollouts"].rows["trajectories"] == 4 and summaries["export"].ran == 1

    texts = _texts(tmp_path / "lake")
    texts.update(_texts(tmp_path / "exports"))
    steps = "".join(t for p, t in texts.items() if "steps" in p.parts)
    exported = "".join(t for p, t in texts.items() if "exports" in p.parts and "lake" not in p.parts)
    leaks = {name: [str(p.relative_to(tmp_path)) for p, t in texts.items() if value in t]
             for name, value in secrets.items()}
    assert not {k: v for k, v in leaks.items() if v}, f"secrets in the lake or exports: {leaks}"
    # the agent's dumps were recorded (the terminal's environment, coding_tool's listing of
    # /proc), so the search above had something to find
    for text in (steps, exported):
        assert "USER=agent" in text and "/proc/1/environ" in text
        assert "bwrap --args" in text  # PID 1's command line, without the host paths
    host = [p for p, t in texts.items() if "/guiforge-desktop-" in t or "/guiforge-tools-" in t]
    assert host == [], "a host workspace path reached the lake"

    # the terminal's steps carry a picture of its window, so they go to the image configs
    # (decoded by `datasets`); the tools' steps are text and go to text_only
    hf = next(p.parent for p in (tmp_path / "exports").rglob("README.md") if (p.parent / "sft_text").is_dir())
    desktop = load_dataset(str(hf), "desktop", split="train")
    assert len(desktop) >= 2 and set(desktop["variant"]) == {"terminal"}
    for row in desktop:
        window = row["images"][-1]
        assert window.size == (row["image_width"], row["image_height"])
        assert window.convert("RGB").getpixel((1, 1)) in {ImageColor.getrgb(p.bar) for p in PALETTES.values()}
        assert sum(p["type"] == "image" for m in row["messages"] for p in m["content"]) == len(row["images"])
    assert {r["domain"] for r in load_dataset(str(hf), "text_only", split="train")} == {"tools"}
    console = Console(record=True, width=300)  # and `guiforge stats --realism` says so
    print_export_breadth(console, Lake(tmp_path / "lake"), None)
    assert f"desktop {len(desktop)} rows: browser 0%, phone bars 0%, terminal window 100%" in console.export_text()


@pytest.fixture(autouse=True)
def _exports_under_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # exports default to a folder beside the lake
