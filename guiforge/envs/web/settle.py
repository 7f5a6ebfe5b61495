"""When a web or mobile page has settled: what the adapter waits for before it takes a frame.

A frame belongs to the step that produced it only once everything the step started has
reached the screen. On the apps' page that is observable (``guiforge.frameState()``):

- no navigation in flight: the document has loaded (``readyState`` complete) and no
  navigation away from it has begun (``beforeunload``). The apps request nothing after their
  load, so a loaded document is also a quiet network;
- no input still on its way: a tap becomes a click that Chromium's gesture detector sends
  after the touch has ended and been acknowledged, so when the tap call returns the page may
  still show the screen before it (on a loaded machine it did, one step behind);
- then a frame drawn after all that, which is what either capture is: a frame drawn on demand
  (``HeadlessExperimental.beginFrame``) draws the page as it is when the call arrives, and
  ``Page.captureScreenshot`` on Chromium's own clock forces a redraw and waits for it.

Bounds count what is awaited, not seconds. A tap's click gets ``TAP_FRAMES`` frames: each
needs the renderer, so a loaded machine draws them slower and the bound stretches with it. A
navigation may take as long as its requests keep being served, and fails once none has been
served for ``NAVIGATION_STALL_S``. Past a bound the step is an environment fault, never a
stale frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from guiforge.envs.base import EnvFailure

if TYPE_CHECKING:
    from guiforge.envs.web.page_env import PageEnv

# A page without the apps (a replayed site, an error page) reports only its load state.
FRAME_STATE = ("() => window.guiforge && guiforge.frameState ? guiforge.frameState() : {app: false, renders: 0,"
               " tap: false, leaving: false, ready: document.readyState === 'complete', episode: null}")
_LOADED = ("() => document.readyState === 'complete'"
           " && !(window.guiforge && guiforge.frameState && guiforge.frameState().leaving)")
TAP_FRAMES = 120
NAVIGATION_STALL_S = 10.0
# A probe unanswered this long is taken for a navigation whose document waits on the routes:
# Playwright serves them only while it is called, and a probe on our own channel does not
# call it, so waiting longer would wait on ourselves. Too short only costs a detour.
PROBE_REPLY_S = 1.0
_POLL_MS = 20


def await_settled(env: PageEnv) -> dict[str, Any]:
    """Wait until the page has settled (see the module); returns its frame state."""
    frames = 0
    while True:
        try:
            state = env.js_sync(FRAME_STATE, reply_timeout_s=PROBE_REPLY_S)
        except (RuntimeError, TimeoutError):  # the document went away under the call, or is on its way
            state = {"leaving": True}
        if state["leaving"] or not state["ready"]:
            await_document(env)
            continue
        if not state["tap"]:
            return state
        if frames == TAP_FRAMES:
            raise EnvFailure(f"a tap's click did not arrive within {TAP_FRAMES} frames on {env.s.page.url}")
        env.frames.draw()
        frames += 1


def await_document(env: PageEnv) -> None:
    """Wait for the document a navigation is bringing in, while its requests are served
    (Playwright serves the apps' routes only while it is called, so this waits through it)."""
    router = env.s.router
    served = getattr(router, "served", 0)
    while True:
        try:
            env.s.page.wait_for_function(_LOADED, polling=_POLL_MS, timeout=NAVIGATION_STALL_S * 1000)
            return
        except PlaywrightTimeout:
            now = getattr(router, "served", 0)
            if now == served:
                raise EnvFailure(f"{env.s.page.url} did not finish loading: no request was served for "
                                 f"{NAVIGATION_STALL_S:.0f}s") from None
            served = now
        except PlaywrightError as exc:  # the context changed under the wait: wait on the new one
            if "destroyed" not in str(exc) and "navigat" not in str(exc):
                raise
