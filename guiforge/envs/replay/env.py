"""``ReplayEnv``: the web domain over recorded real sites, offline and deterministic.

A task names its recording in ``setup``::

    TaskSpec(domain="web", setup={"replay": "recordings/shop.json.gz"}, ...)
    TaskSpec(domain="web", setup={"replay": {"sha256": "<blob>", "lake": "data/lake"}}, ...)
    # optional: "start": a URL to open instead of the recording's start_url

Every reset starts a new document in a scrubbed replay context (no cookie, storage, cache,
window or history survives an episode; the first replay reset opens the context), freezes
``Date`` at the recording's clock, seeds ``Math.random``/``crypto``, and
answers every request from the recording (:class:`ReplayRouter`). The browser is launched
with a resolver rule that maps *every* host, loopback included, to NOTFOUND, so a request
that escaped routing could not connect anywhere either. A task without ``setup.replay`` runs
on the local apps exactly as :class:`WebEnv` would, so ReplayEnv can stand in for WebEnv as
the manager's ``web`` adapter: ``EnvManager({**default_factories(), "web": ReplayEnv})``.

The final state for verifiers is ``apps["replay"]``: ``url``, ``title``, ``submitted`` (the
non-GET requests of the episode, forms parsed) and ``misses`` (requests the recording could
not answer).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any
from urllib.parse import urljoin, urlsplit

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page

from guiforge.envs.actions import Action
from guiforge.envs.base import EnvSpec, FinalState, Observation, TaskSpec
from guiforge.envs.replay import page_scripts
from guiforge.envs.replay.recording import Recording, load_recording
from guiforge.envs.replay.router import ReplayRouter
from guiforge.envs.web.browser import CHROMIUM_ARGS
from guiforge.envs.web.page_env import ActionError
from guiforge.envs.web.routing import Router
from guiforge.envs.web.web_env import WebEnv

REPLAY_ARGS = tuple(a for a in CHROMIUM_ARGS if not a.startswith("--host-resolver-rules")) + (
    "--host-resolver-rules=MAP * ~NOTFOUND",  # IP literals and localhost too: nothing resolves
)
SETTLE_S = 5.0  # longest wait for a replayed page to stop loading after an action
_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"
CACHED_RECORDINGS = 8


class ReplayEnv(WebEnv):
    domain = "web"
    chromium_args = REPLAY_ARGS
    begin_frames = False  # recorded sites animate and wait on requestAnimationFrame: keep Chromium's clock

    def __init__(self, spec: EnvSpec, **kwargs: Any):
        super().__init__(spec, **kwargs)
        self.mode = "apps"  # "apps" (the local apps, as WebEnv) or "replay"
        self._recordings: OrderedDict[str, tuple[str, Recording]] = OrderedDict()  # parsed once
        self._requests = self._finished = self._navigations = 0

    @property
    def router(self) -> ReplayRouter:
        router = self.s.router
        if not isinstance(router, ReplayRouter):
            raise RuntimeError("no recording is loaded; reset with a task whose setup names one")
        return router

    # The scripts WebEnv's helpers run: the apps' own in apps mode, generic ones on a site.
    @property
    def scan_script(self) -> str:  # type: ignore[override]
        return page_scripts.SCAN if self.mode == "replay" else super().scan_script

    @property
    def hit_script(self) -> str:  # type: ignore[override]
        return page_scripts.HIT if self.mode == "replay" else super().hit_script

    @property
    def focus_script(self) -> str:  # type: ignore[override]
        return page_scripts.FOCUS if self.mode == "replay" else super().focus_script

    # -- episode -----------------------------------------------------------------------
    def reset(self, task: TaskSpec) -> Observation:
        ref = task.setup.get("replay")
        if ref is None:
            if self.mode != "apps":  # back to the apps: a fresh context with their router
                self.s.renew(self.context_options(self.s.playwright), Router())
                self.mode, self._mouse_used = "apps", False
            return super().reset(task)
        name, recording = self._recording(ref)
        if isinstance(self.s.router, ReplayRouter):
            self._scrub()  # reuse the replay context: a new one costs a renderer process
        else:
            self.s.renew(self.context_options(self.s.playwright), ReplayRouter(recording, name),
                         lambda context: context.add_init_script(page_scripts.DETERMINISM))
            self._watch(self.s.page)
        self.router.load(recording, name)
        self.s.context.clock.set_fixed_time(recording.normalizer.clock)
        self.mode, self._mouse_used = "replay", False
        self.task, self.answer, self.status = task, None, None
        self._requests = self._finished = self._navigations = 0
        start = str(task.setup.get("start") or recording.start_url)
        self.s.page.goto(start, wait_until="load")
        self.settle()
        self.s.cdp.send("Page.resetNavigationHistory")
        return self.observe()

    def _scrub(self) -> None:
        """Leave nothing of the last episode in the context: its document, other windows,
        cookies, every kind of storage of every origin it touched, and window.name (which
        survives navigation). The HTTP cache is off while routes are installed."""
        page, context = self.s.page, self.s.context
        for other in context.pages:
            if other != page:
                other.close()
        page.goto("about:blank")
        page.evaluate("() => { window.name = ''; }")
        context.clear_cookies()
        for origin in sorted(self.router.origins):
            self.s.cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
        self.router.origins.clear()

    def _recording(self, ref: str | dict[str, Any]) -> tuple[str, Recording]:
        key = ref if isinstance(ref, str) else repr(sorted(ref.items()))
        if key in self._recordings:
            self._recordings.move_to_end(key)
        else:
            self._recordings[key] = load_recording(ref)
            if len(self._recordings) > CACHED_RECORDINGS:
                self._recordings.popitem(last=False)
        return self._recordings[key]

    def _watch(self, page: Page) -> None:
        def navigated(frame: Any) -> None:
            if frame == page.main_frame:
                self._navigations += 1

        def started(_: Any) -> None:
            self._requests += 1

        def ended(_: Any) -> None:
            self._finished += 1

        page.on("request", started)
        page.on("requestfinished", ended)
        page.on("requestfailed", ended)
        page.on("framenavigated", navigated)

    def settle(self) -> None:
        """On a replayed site: wait until the page has loaded, no request is open and two
        animation-frame rounds pass with no new request or navigation."""
        if self.mode != "replay":
            super().settle()
            return
        page = self.s.page
        until = time.monotonic() + SETTLE_S
        quiet = 0
        while quiet < 2 and time.monotonic() < until:
            before = (self._requests, self._navigations)
            try:
                page.wait_for_load_state("load", timeout=max(1.0, (until - time.monotonic()) * 1000))
                page.evaluate(_FRAMES)
            except PlaywrightError:  # a navigation replaced the document mid-wait
                quiet = 0
                continue
            idle = self._requests == self._finished and (self._requests, self._navigations) == before
            quiet = quiet + 1 if idle else 0

    def execute(self, action: Action) -> str:
        if self.mode != "replay":
            return super().execute(action)
        if action.type == "goto":
            return self._goto(action.text or "")
        if action.type == "back":
            hist = self.s.cdp.send("Page.getNavigationHistory")
            if hist["currentIndex"] <= 0:
                raise ActionError("there is no previous page to go back to")
            self.s.page.go_back(wait_until="load")
            self.settle()
            return "went back"
        try:
            return super().execute(action)
        finally:
            self.settle()  # a click may have submitted a form or followed a link

    def _goto(self, target: str) -> str:
        url = urljoin(self.s.page.url, target.strip())
        if urlsplit(url).scheme not in ("http", "https"):
            raise ActionError(f"cannot open {target!r}: give a URL or a path on the replayed site")
        try:
            self.s.page.goto(url, wait_until="load")
        except PlaywrightError as exc:
            raise ActionError(f"cannot open {url}: {str(exc).splitlines()[0]}") from None
        self.settle()
        return f"opened {url}"

    def final_state(self) -> FinalState:
        if self.mode != "replay":
            return super().final_state()
        router = self.router
        page = self.s.page
        state = {"recording": router.name, "url": page.url, "title": page.title(),
                 "submitted": list(router.submitted), "misses": list(router.misses)}
        return FinalState(apps={"replay": state}, answer=self.answer, status=self.status)

    def healthy(self) -> bool:
        if self.mode != "replay":
            return super().healthy()
        s = self.session
        if s is None or not s.alive() or not s.browser.is_connected() or s.page.is_closed():
            return False
        try:
            return s.page.evaluate("() => 1") == 1
        except PlaywrightError:
            return False
