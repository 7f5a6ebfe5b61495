"""Who draws a page's frames, and so what a screenshot waits for.

:class:`VsyncFrames` leaves Chromium on its own 60 Hz clock: a capture waits for the next
frames to be drawn (~33 ms on an idle page, whatever is on it). :class:`BeginFrames` uses the
headless shell's begin-frame control (``Target.createTarget(enableBeginFrameControl)`` plus
``--run-all-compositor-stages-before-draw``): no frame is drawn unless we ask, and
``HeadlessExperimental.beginFrame`` draws one *now* and returns its screenshot: one draw
per capture instead of two (the one the change scheduled, then the one the capture asks
for), ~10% less wall and CPU per reset here (``python bench/envs.py`` times both). The frame
shows the page's whole state at that moment, so it is also deterministic.

A page without a clock draws nothing on its own: ``requestAnimationFrame`` callbacks wait,
and so do input acknowledgements that need a frame (a wheel, a touch). While an action runs,
:meth:`BeginFrames.pumping` keeps a clock going on a thread of its own, over a CDP channel
of its own to the page.
"""

from __future__ import annotations

import base64
import contextlib
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from guiforge.envs.web.cdp import Call, CdpError

if TYPE_CHECKING:
    from guiforge.envs.web.browser import BrowserSession

PUMP_INTERVAL_S = 0.004  # at most ~250 frames/s while the clock runs; each costs ~1-10 ms
# A click or a keystroke is acknowledged without a frame, and frames drawn meanwhile only
# compete for the cores (+17 ms a click here), so for those actions the clock starts only
# if one is still waiting after this long: a safety net, not a cost.
LATE_CLOCK_S = 0.25
FRAME_FLAGS = ("--run-all-compositor-stages-before-draw",)  # beginFrame requires it
# Two animation frames after the call: the page's state is drawn (Chromium's own clock)
_PAINTED = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"


def begin_frame_flags(device_pixels: float = 1.0) -> tuple[str, ...]:
    """The launch flags of a page that draws on demand. A frame drawn on demand has the
    window's own scale, whatever the page's emulated devicePixelRatio, so a phone whose frames
    are in device pixels gets a window of that scale (the emulation then matches it and the
    page lays out as before): a Pixel 7's frame is 1082x2203, its surface's size rounded up."""
    if device_pixels == 1.0:
        return FRAME_FLAGS
    return (*FRAME_FLAGS, f"--force-device-scale-factor={device_pixels:g}")


class Frames:
    """A frame source: the CDP call that captures a frame, and the image in its reply."""

    name = ""

    def __init__(self, session: BrowserSession):
        self.session = session  # its page and CDP session change when the context is renewed

    def capture_call(self, params: dict[str, Any]) -> Call:
        raise NotImplementedError

    def image(self, reply: dict[str, Any], params: dict[str, Any]) -> bytes:
        raise NotImplementedError

    def capture(self, params: dict[str, Any]) -> bytes:
        return self.image(self.session.cdp.send(*self.capture_call(params)), params)

    @contextlib.contextmanager
    def pumping(self, after_s: float = 0.0) -> Iterator[None]:
        """A clock for the page while the block runs; Chromium's own clock needs none."""
        yield

    def draw(self) -> None:
        """Let one frame pass (what a page waiting on one needs to move on)."""
        self.session.cdp.send("Runtime.evaluate", {"expression": _PAINTED, "awaitPromise": True})

    def flush(self) -> None:
        """Let a frame the browser started on its own (a resize) finish before a capture."""


class VsyncFrames(Frames):
    """Chromium's own compositor clock."""

    name = "vsync"

    def capture_call(self, params: dict[str, Any]) -> Call:
        return ("Page.captureScreenshot", params)

    def image(self, reply: dict[str, Any], params: dict[str, Any]) -> bytes:
        return base64.b64decode(reply["data"])


class BeginFrames(Frames):
    """Frames on demand: one per capture, and a clock while an action runs."""

    name = "begin_frame"

    def capture_call(self, params: dict[str, Any]) -> Call:
        return ("HeadlessExperimental.beginFrame", {"screenshot": params})

    def image(self, reply: dict[str, Any], params: dict[str, Any]) -> bytes:
        data = reply.get("screenshotData")
        if data is None:  # Chromium draws no screenshot when the frame was dropped; ask again
            data = self.session.cdp.send(*self.capture_call(params)).get("screenshotData")
        if data is None:
            raise RuntimeError("Chromium returned no frame for the screenshot (HeadlessExperimental.beginFrame)")
        return base64.b64decode(data)

    def draw(self) -> None:
        self.flush(screenshot=False)

    def flush(self, tries: int = 100, screenshot: bool = True) -> None:
        """Draw one full frame (with a throwaway screenshot) after a resize. Without it, a
        page resized again before any screenshot (the package gate takes none) kept a frame
        pending for good: every later beginFrame was refused ("Another frame is pending"),
        the clock stopped and the next input waited past its deadline. Retried while
        Chromium still reports a frame in flight."""
        for _ in range(tries):
            try:
                # a frame with a screenshot is drawn in full, which a resize waits for
                shot = {"screenshot": {"format": "jpeg", "quality": 1}} if screenshot else {}
                self.session.cdp.send("HeadlessExperimental.beginFrame", shot)
                return
            except CdpError as exc:
                if "pending" not in str(exc):
                    raise
                threading.Event().wait(PUMP_INTERVAL_S)
        raise RuntimeError("the page kept a frame pending after a resize (HeadlessExperimental.beginFrame)")

    @contextlib.contextmanager
    def pumping(self, after_s: float = 0.0) -> Iterator[None]:
        """Draw frames in the background while the block runs, starting ``after_s`` into it
        (a block done sooner draws nothing).

        The clock is a thread with its own channel to the page; it is stopped by a flag and
        joined, never abandoned, so a beginFrame in flight always gets its answer before the
        next capture (Chromium refuses a second one in flight). A failing clock (the browser
        died) ends quietly: the block's own calls report the fault."""
        channel = self.session.clock_channel()
        stop = threading.Event()

        def clock() -> None:
            if stop.wait(after_s):
                return
            with contextlib.suppress(Exception):
                while not stop.is_set():
                    channel.send("HeadlessExperimental.beginFrame")
                    stop.wait(PUMP_INTERVAL_S)

        thread = threading.Thread(target=clock, name="guiforge-frame-clock", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
