"""Desktop frames that belong to their step (guiforge.envs.desktop.settle): a frame is the
settled screen (LibreOffice's deferred toolbar and status-bar update included), its caret in a
fixed phase, numbered with the step it follows; the same scripted episode in fresh desktops
gives the same frames byte for byte, idle and with every core oversubscribed."""

from __future__ import annotations

import hashlib
import io

import numpy as np
import pytest
from PIL import Image

from guiforge.envs import Action, EnvSpec
from guiforge.envs.desktop import DesktopEnv

CALC = [Action(type="click", x=150, y=300), Action(type="type", text="30"), Action(type="key", keys=["enter"]),
        Action(type="type", text="hello"), Action(type="hotkey", keys=["ctrl", "z"])]
WRITER = [Action(type="hotkey", keys=["ctrl", "end"]), Action(type="type", text="\nApproved"),
          Action(type="key", keys=["left"])]


def episode(env: DesktopEnv, task, files: dict, actions: list[Action]) -> list[str]:
    obs = env.reset(task(f"frames-{next(iter(files))}", {"files": files, "open": next(iter(files))}))
    frames = [obs]
    for action in actions:
        result = env.step(action)
        assert result.error is None, result.error
        assert result.observation.seq == frames[-1].seq + 1
        frames.append(result.observation)
    return [hashlib.sha256(f.screenshot).hexdigest() for f in frames]


def fresh_run(task, xlsx_bytes: bytes, docx_bytes: bytes) -> list[list[str]]:
    env = DesktopEnv(EnvSpec(domain="desktop", variant="gui"))
    env.start()
    try:
        return [episode(env, task, {"report.xlsx": xlsx_bytes}, CALC),
                episode(env, task, {"memo.docx": docx_bytes}, WRITER)]
    finally:
        env.kill()


@pytest.fixture(scope="module")
def idle_run(task, xlsx_bytes, docx_bytes):
    return fresh_run(task, xlsx_bytes, docx_bytes)


def test_identical_runs_give_identical_frames(idle_run, task, xlsx_bytes, docx_bytes):
    calc, writer = idle_run
    assert len(set(calc)) >= 4 and len(set(writer)) == len(writer)  # the caret shows where it moved
    assert fresh_run(task, xlsx_bytes, docx_bytes) == idle_run


def test_frames_are_the_same_on_oversubscribed_cores(idle_run, task, xlsx_bytes, docx_bytes, oversubscribed_cores):
    assert fresh_run(task, xlsx_bytes, docx_bytes) == idle_run


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_a_frame_is_the_screen_once_libreoffice_is_done(hybrid_env, task, xlsx_bytes):
    """After a cell edit LibreOffice redraws at once and updates Undo and the modified flag
    a moment later: the step's frame has both (it had only the first, idle or not)."""
    env = hybrid_env
    env.reset(task("settled", {"files": {"r.xlsx": xlsx_bytes}, "open": "r.xlsx"}))
    env.step(Action(type="click", x=150, y=300))
    env.step(Action(type="type", text="30"))
    frame = env.step(Action(type="key", keys=["enter"])).observation
    env.office.wait_idle(quiet_s=1.5)  # long after LibreOffice is done; no caret outside a cell edit
    assert np.array_equal(_pixels(frame.screenshot), _pixels(env.x.png(env.x.grab())))
    assert env.observe().seq == frame.seq  # a look is not a step
