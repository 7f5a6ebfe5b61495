"""When the desktop's screen has settled after an action, and which frame to store then.

LibreOffice handles the input, redraws, and a moment later updates its toolbars and status
bar (SfxBindings refreshes them about 300 ms after a change); its text caret blinks every
500 ms for as long as it shows. A frame is taken once

- the screen has not changed for ``QUIET_S``, caret blinks apart (a change that exactly
  inverts a few pixels: VCL draws its caret by inverting them), ``QUIET_S`` being longer than
  the deferred update and than one blink, so a caret that blinks has been seen blinking
  (``STATUS_S``, the deferred update only, where no frame is stored: the package gate);
- and no LibreOffice thread is waiting to run: on a loaded machine a due timer shows as a
  runnable thread long before it shows on the screen;
- and then the X server has no request left to handle: LibreOffice may have sent its drawing
  and gone to sleep while Xvfb, starved of a CPU, has not yet put it on the screen (on a
  machine with a load of 20, long past ``QUIET_S``). Xvfb is one thread that sleeps only
  when no client has anything for it, so "not runnable" means every request sent so far is
  on the screen. Both are read before the look at the screen (a grab wakes Xvfb itself).

The blink's phase at that moment depends on timing, so the stored frame shows every caret seen
blinking in one fixed phase, the darker one (the caret shown, on a light document, as a person
sees it right after typing): a pixel that may legitimately differ, made the same in every run.

After a step that sent the screen no input (a terminal command, an action refused before it
ran), a screen still showing the last settled frame (carets aside) with LibreOffice idle is
that frame again, without the wait.

The bound is counted in LibreOffice's own time, wall time less the time its main thread spent
waiting for a CPU (``/proc/<pid>/schedstat``): a loaded machine stretches it by the delay it
causes, and a window still changing after ``BUDGET_S`` of that time (an animation, a hung
redraw) is an environment fault, never a frame taken mid-change.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from guiforge.envs.base import EnvFailure

QUIET_S = 0.65
STATUS_S = 0.35
POLL_S = 0.05  # a look at the screen every 50 ms (a grab costs ~3 ms)
BUDGET_S = 20.0
# A caret is a bar at most this thick and long (LibreOffice's is 2 px wide, a line high);
# anything else that changes is the window's content.
CARET_MAX_WIDTH, CARET_MAX_LENGTH = 4, 400


class Screen(Protocol):
    width: int
    height: int

    def grab(self) -> bytes: ...

    def busy(self) -> bool: ...


class App(Protocol):
    """What the settle asks of the application on the screen (guiforge.envs.desktop.office)."""

    def running(self) -> bool: ...

    def busy(self) -> bool: ...

    def waited_s(self) -> float: ...


@dataclass
class Carets:
    """The pixels seen blinking since the screen last changed, one mask per blink place."""

    masks: dict[tuple[int, int, int, int], np.ndarray] = field(default_factory=dict)

    def blink(self, before: np.ndarray, after: np.ndarray, changed: np.ndarray) -> bool:
        """Record ``before`` -> ``after`` if it is a caret blink (a thin bar of pixels, each
        exactly inverted); False if it is a change of content."""
        ys, xs = np.nonzero(changed)
        box = (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)
        thick, long = sorted((box[2] - box[0], box[3] - box[1]))
        if thick > CARET_MAX_WIDTH or long > CARET_MAX_LENGTH:
            return False
        if not np.all((before[ys, xs, :3] ^ after[ys, xs, :3]) == 255):
            return False
        self.masks[box] = changed[box[1]:box[3], box[0]:box[2]]
        return True

    def fixed_phase(self, frame: np.ndarray) -> np.ndarray:
        """The frame with each blinking caret in its darker phase."""
        out = frame
        for (x0, y0, x1, y1), mask in self.masks.items():
            region = out[y0:y1, x0:x1, :3]
            lit = region[mask].astype(np.int64).sum()
            if lit * 2 > 255 * 3 * int(mask.sum()):  # lighter than its inverse: the caret is off
                if out is frame:
                    out = frame.copy()
                out[y0:y1, x0:x1, :3][mask] ^= 255
        return out


@dataclass
class Settled:
    """A settled screen: the frame to store (raw BGRA, carets in their fixed phase) and the
    carets seen blinking on it."""

    frame: bytes
    carets: Carets


def _pixels(screen: Screen, raw: bytes) -> np.ndarray:
    return np.frombuffer(raw, np.uint8).reshape(screen.height, screen.width, 4)


def settled_frame(screen: Screen, app: App | None, quiet_s: float = QUIET_S,
                  budget_s: float = BUDGET_S, unchanged: Settled | None = None) -> Settled:
    """The screen once it has settled (see the module), its carets in the darker phase.
    ``unchanged``: the last settled screen, when nothing was sent to the screen since.
    Raises EnvFailure past ``budget_s`` of the application's own time."""
    watching = app is not None and app.running()
    started, waited0 = time.monotonic(), app.waited_s() if watching else 0.0
    carets = Carets()
    raw = screen.grab()
    frame = _pixels(screen, raw)
    if unchanged is not None and not (watching and app.busy()) and not screen.busy():
        shown = unchanged.carets.fixed_phase(frame).tobytes() if unchanged.carets.masks else raw
        if shown == unchanged.frame:
            return unchanged
    quiet_since = started
    tick = threading.Event()
    while True:
        tick.wait(POLL_S)
        now = time.monotonic()
        # idle first (the app, then the server that draws for it), then the look: a frame
        # taken then holds everything the app has drawn
        idle = not (watching and app.busy()) and not screen.busy()
        current_raw = screen.grab()
        if current_raw != raw:
            current = _pixels(screen, current_raw)
            changed = (current != frame).any(axis=2)
            if not carets.blink(frame, current, changed):
                carets, quiet_since = Carets(), now  # the content changed: start over
            raw, frame = current_raw, current
        if now - quiet_since >= quiet_s and idle:
            return Settled(carets.fixed_phase(frame).tobytes() if carets.masks else raw, carets)
        own = (now - started) - ((app.waited_s() - waited0) if watching else 0.0)
        if own > budget_s:
            raise EnvFailure(f"the screen did not settle within {budget_s:.0f}s of the application's own "
                             f"time ({now - started:.0f}s of wall time): it keeps changing")
