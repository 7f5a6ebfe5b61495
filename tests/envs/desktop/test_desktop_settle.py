"""The settle rule on its own (guiforge.envs.desktop.settle): a screen that keeps changing is
an environment fault once the bound is spent; a caret blink (an exact inversion of a few
pixels) is not a change of content, and is stored in one phase whichever phase was seen."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from guiforge.envs import EnvFailure
from guiforge.envs.desktop.settle import Carets, settled_frame
from guiforge.envs.desktop.xserver import XServer


@pytest.fixture
def screen():
    x = XServer(320, 240)
    x.start()
    yield x
    x.close()


def test_a_quiet_screen_settles_on_what_it_shows(screen):
    assert settled_frame(screen, None, quiet_s=0.2).frame == screen.grab()


@pytest.mark.skipif(shutil.which("xsetroot") is None, reason="needs xsetroot (x11-xserver-utils)")
def test_a_screen_that_keeps_changing_is_an_environment_fault(screen):
    loop = 'i=0; while true; do i=$(( (i + 1) % 250 )); xsetroot -solid "rgb:$(printf %02x $i)/40/80"; done'
    painter = subprocess.Popen(["sh", "-c", loop], env=screen.env(), start_new_session=True)
    try:
        with pytest.raises(EnvFailure, match="did not settle"):
            settled_frame(screen, None, quiet_s=0.2, budget_s=1.0)
    finally:
        painter.kill()
        painter.wait()


def _frames() -> tuple[np.ndarray, np.ndarray]:
    off = np.full((40, 60, 4), 250, np.uint8)
    off[10:20, 5:50, :3] = 30  # some text on the line
    on = off.copy()
    on[8:24, 52:54, :3] ^= 255  # the caret: a 2 px bar, inverted
    return off, on


def test_a_caret_blink_is_told_from_a_change_of_content():
    off, on = _frames()
    carets = Carets()
    assert carets.blink(off, on, (on != off).any(axis=2))
    typed = off.copy()
    typed[10:20, 50:52, :3] = 40  # one more character: not an exact inversion
    assert not Carets().blink(off, typed, (typed != off).any(axis=2))
    block = off.copy()
    block[:, :, :3] ^= 255  # a whole region inverted is content, not a caret
    assert not Carets().blink(off, block, (block != off).any(axis=2))


def test_a_blinking_caret_is_stored_shown_whichever_phase_was_seen():
    off, on = _frames()
    carets = Carets()
    carets.blink(off, on, (on != off).any(axis=2))
    assert np.array_equal(carets.fixed_phase(off), on)
    assert np.array_equal(carets.fixed_phase(on), on)


class StarvedServer:
    """A screen whose X server has a client's drawing queued (busy) for its first ``queued``
    looks and puts it on the screen after: what a starved Xvfb does on a loaded machine."""

    width, height = 8, 4

    def __init__(self, queued: int):
        self.queued = queued
        self.before = np.zeros((4, 8, 4), np.uint8).tobytes()
        self.after = np.full((4, 8, 4), 200, np.uint8).tobytes()

    def busy(self) -> bool:
        self.queued -= 1
        return self.queued >= 0

    def grab(self) -> bytes:
        return self.before if self.queued >= 0 else self.after


def test_a_frame_waits_for_drawing_the_x_server_has_not_done_yet():
    """The screen has been still for longer than the quiet time, but only because Xvfb has
    not had a CPU to draw what the application sent: the frame is what it then draws."""
    screen = StarvedServer(queued=12)  # 12 looks of 50 ms: past the 0.2 s quiet time
    assert settled_frame(screen, None, quiet_s=0.2).frame == screen.after

