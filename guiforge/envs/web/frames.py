"""Who draws a page's frames, and so what a screenshot waits for.

:class:`VsyncFrames` leaves Chromium on its own 60 Hz clock: a capture waits for the next
frames to be drawn (~33 ms on an idle page, whatever is on it). :class:`BeginFrames` uses the
headless shell's begin-frame control (``Target.createTarget(enableBeginFrameControl)`` plus
``--run-all-compositor-stages-before-draw``): no frame is drawn unless we ask, and
``HeadlessExperimental.beginFrame`` draws one *now* and returns its screenshot (~13 ms),
which roughly halves a reset and a click (``python bench/envs.py``). The frame shows the
page's whole state at that moment, so it is also deterministic.

A page without a clock draws nothing on its own: ``requestAnimationFrame`` callbacks wait,
and so do input acknowledgements that need a frame (a wheel, a touch). While an action runs,
:meth:`BeginFrames.pumping` keeps a clock going on Playwright's own event loop: it only runs
while a Playwright call is waiting, which is exactly when the page needs frames.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from guiforge.envs.web.browser import BrowserSession

PUMP_INTERVAL_S = 0.004  # at most ~250 frames/s while an action runs; each costs ~1-10 ms
FRAME_FLAGS = ("--run-all-compositor-stages-before-draw",)  # beginFrame requires it


class VsyncFrames:
    """Chromium's own compositor clock."""

    name = "vsync"

    def __init__(self, session: BrowserSession):
        self.session = session  # its page and CDP session change when the context is renewed

    def capture(self, params: dict[str, Any]) -> bytes:
        return base64.b64decode(self.session.cdp.send("Page.captureScreenshot", params)["data"])

    @contextlib.contextmanager
    def pumping(self) -> Iterator[None]:
        yield


class BeginFrames:
    """Frames on demand: one per capture, and a clock while an action runs."""

    name = "begin_frame"

    def __init__(self, session: BrowserSession):
        self.session = session

    def capture(self, params: dict[str, Any]) -> bytes:
        cdp = self.session.cdp
        reply = cdp.send("HeadlessExperimental.beginFrame", {"screenshot": params})
        data = reply.get("screenshotData")
        if data is None:  # Chromium draws no screenshot when the frame was dropped; ask again
            data = cdp.send("HeadlessExperimental.beginFrame", {"screenshot": params}).get("screenshotData")
        if data is None:
            raise RuntimeError("Chromium returned no frame for the screenshot (HeadlessExperimental.beginFrame)")
        return base64.b64decode(data)

    @contextlib.contextmanager
    def pumping(self) -> Iterator[None]:
        """Draw frames in the background while the block's Playwright calls wait.

        Playwright's sync API runs its asyncio loop only inside a call, so the clock task
        advances exactly then. It is stopped by a flag and awaited, never cancelled: a
        beginFrame in flight always gets its answer, and only one is ever in flight (Chromium
        refuses a second)."""
        # Playwright's sync objects wrap async ones on one loop; these private names are the
        # only way to put a task on that loop (pinned by tests/envs/web/test_frames.py).
        page = self.session.page
        loop: asyncio.AbstractEventLoop = page._loop
        send = self.session.cdp._impl_obj.send
        state = {"run": True}

        async def clock() -> None:
            while state["run"]:
                await send("HeadlessExperimental.beginFrame", {}, None)
                await asyncio.sleep(PUMP_INTERVAL_S)

        task = loop.create_task(clock())
        try:
            yield
        except BaseException:
            state["run"] = False
            with contextlib.suppress(Exception):  # the action's own error is the one to report
                page._sync(task)
            raise
        state["run"] = False
        page._sync(task)  # let the frame in flight finish
