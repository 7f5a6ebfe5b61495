"""The desktop's input goes through libxdo in process (guiforge.envs.desktop.xdo): no
process per action, and what it types is what the xdotool command typed."""

from __future__ import annotations

import subprocess

import pytest

from guiforge.envs import Action, EnvSpec
from guiforge.envs.desktop import DesktopEnv

ACTIONS = [Action(type="click", x=150, y=300), Action(type="type", text="42\tabc\n"),
           Action(type="key", keys=["up"]), Action(type="hotkey", keys=["ctrl", "z"]),
           Action(type="drag", x=150, y=300, x2=300, y2=360), Action(type="scroll", x=500, y=500, direction="down"),
           Action(type="double_click", x=150, y=320), Action(type="key", keys=["escape"])]


@pytest.fixture(scope="module")
def gui_env():
    env = DesktopEnv(EnvSpec(domain="desktop", variant="gui"))
    env.start()
    try:
        yield env
    finally:
        env.kill()


def test_gui_actions_start_no_process(gui_env, task, xlsx_bytes, monkeypatch):
    """Every GUI action goes through the channel: the only processes a step starts are the
    window searches of its observation."""
    gui_env.reset(task("channel", {"files": {"r.xlsx": xlsx_bytes}, "open": "r.xlsx"}))
    started: list[list[str]] = []
    popen = subprocess.Popen

    def watched(args, *a, **k):  # subprocess.run starts its process through this too
        started.append(list(args))
        return popen(args, *a, **k)

    monkeypatch.setattr(subprocess, "Popen", watched)
    for action in ACTIONS:
        result = gui_env.step(action)
        assert result.error is None, result.error
        assert result.observation.debug["windows"]
    assert started and all(args[:2] == ["xdotool", "search"] for args in started), started


def test_the_typed_text_is_what_libreoffice_saves(gui_env, task):
    """What the channel typed is what LibreOffice saves (a Writer line typed after a
    Return, with a Tab); the window list names the document. Digits only: Writer's
    autocorrect would capitalise a word that starts a sentence."""
    obs = gui_env.reset(task("typed", {"files": {"memo.txt": {"text": "first\n"}}, "open": "memo.txt"}))
    assert any(w["title"].startswith("memo.txt") for w in obs.debug["windows"])
    for action in (Action(type="hotkey", keys=["ctrl", "end"]), Action(type="type", text="\n12\t34"),
                   Action(type="hotkey", keys=["ctrl", "s"]), Action(type="key", keys=["enter"])):
        assert gui_env.step(action).error is None
    text = (gui_env.final_state().workspace / "memo.txt").read_text(encoding="utf-8-sig")
    assert text.splitlines()[-1] == "12\t34", text
