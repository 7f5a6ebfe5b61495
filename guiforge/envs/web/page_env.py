"""What the web and mobile adapters share: one long-lived page, state swapped in on reset,
screenshots, element geometry for ``Observation.debug``, and the final app state.

``reset`` never creates a context: it loads the task's state into the running page
(``window.guiforge.loadState``), clears storage and cookies, drops the back history and
focus, so a reset costs one evaluate (the load), one more for the settle check
(:mod:`guiforge.envs.web.settle`), then a screenshot and an element scan sent together (the
capture's encoding overlaps the scan). On the headless shell the page draws only when asked
(:mod:`guiforge.envs.web.frames`).

Frames belong to their step: every reset and step is numbered (``Observation.seq``), a frame
is taken once the page has settled, and a reset's frame must show the state it loaded (the
page's state carries the reset's number) or the reset is an environment fault.

Page scripts run through CDP's ``Runtime.evaluate`` and return one JSON string: Playwright's
``page.evaluate`` serialises arguments and results value by value, which made the element scan
cost ~22 ms of CPU (driver + Python) against ~5 ms this way (``python bench/web_env.py``).
"""

from __future__ import annotations

import json
import math
from typing import Any

from playwright.sync_api import Playwright

from guiforge.envs.actions import Action, to_grid
from guiforge.envs.apps import APP_NAMES, app_info
from guiforge.envs.base import (
    EnvFailure,
    Environment,
    EnvSpec,
    FinalState,
    Observation,
    StepResult,
    TaskSpec,
)
from guiforge.envs.web.browser import CHROMIUM_ARGS, BrowserSession, launch
from guiforge.envs.web.cdp import Call
from guiforge.envs.web.frames import (
    LATE_CLOCK_S,
    BeginFrames,
    Frames,
    VsyncFrames,
    begin_frame_flags,
)
from guiforge.envs.web.page_actions import FOCUS_SCRIPT, HIT_SCRIPT, ActionError, PageActions
from guiforge.envs.web.routing import APP_ORIGIN
from guiforge.envs.web.settle import await_settled

_INSPECT = ("() => window.guiforge ? {elements: guiforge.elements(), focus: guiforge.focusInfo(), path: guiforge.path(),"
            " episode: guiforge.episode ? guiforge.episode() : null} : null")
# Synchronous: a view finishes inside render() (GF.after), so the screenshot and scan that
# follow see it finished, and the call needs no promise round (~4 ms a reset). The episode
# number goes into the page's state, where the reset's frame must find it.
_LOAD = ("(text) => { if (!window.guiforge) return null; const s = JSON.parse(text);"
         " guiforge.loadState(s.apps, s.system, s.start, true, s.episode); return true; }")


# What of a task's presentation the page draws (static/presentation.js, static/chrome.js).
_DRAWN = ("theme", "distractors", "browser", "phone")


def _js_call(function: str, args: tuple[Any, ...], awaits: bool = True) -> Call:
    """Runtime.evaluate of a page function whose result comes back as one JSON string."""
    call = f"({function})({', '.join(json.dumps(a) for a in args)})"
    if not awaits:
        return ("Runtime.evaluate", {"expression": f"JSON.stringify({call})", "returnByValue": True})
    expression = f"(async () => JSON.stringify(await {call}))()"
    return ("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})


class PageEnv(PageActions, Environment):
    """Base of :class:`WebEnv` and :class:`MobileEnv`; subclasses define the context
    options and the action executors."""

    chromium_args: tuple[str, ...] = CHROMIUM_ARGS
    # Draw frames only when asked where the browser can (headless shell) and the frames are
    # CSS pixels: a device-pixel phone frame needs page.screenshot, which waits on the clock.
    begin_frames: bool = True
    # Actions that wait on frames (input acknowledged at a frame, requestAnimationFrame):
    # with frames drawn on demand they get a clock from the start, the others a late one.
    frame_actions: frozenset[str] = frozenset({"wait"})
    # Page functions for the element scan, the hit test and the focus probe (the apps'
    # window.guiforge; a replayed site brings its own, see guiforge.envs.replay).
    scan_script: str = _INSPECT
    hit_script: str = HIT_SCRIPT
    focus_script: str = FOCUS_SCRIPT

    def __init__(self, spec: EnvSpec, image_format: str = "png", jpeg_quality: int = 80,
                 screenshot_scale: str | None = None):
        super().__init__(spec)
        screenshot_scale = screenshot_scale or spec.screenshot_scale or "device"
        if image_format not in ("png", "jpeg"):
            raise ValueError(f"image_format must be png or jpeg, not {image_format!r}")
        if screenshot_scale not in ("device", "css"):
            raise ValueError(f"screenshot_scale must be device or css, not {screenshot_scale!r}")
        self.image_format = image_format
        self.jpeg_quality = jpeg_quality
        self.screenshot_scale = screenshot_scale
        self.session: BrowserSession | None = None
        self.frames: Frames | None = None
        self.task: TaskSpec | None = None
        self.css_size = (0, 0)
        self.start_size: tuple[int, int] | None = None  # the viewport the instance started with
        self.scale = 1.0  # screenshot pixels per CSS pixel
        self.dpr = 1.0
        # Resets and steps so far: a frame carries the number of the one it was taken after
        # (Observation.seq), and the page's state carries its reset's (guiforge.episode()).
        self.seq = 0

    # -- subclass hooks ----------------------------------------------------------------
    def context_options(self, pw: Playwright) -> dict[str, Any]:
        raise NotImplementedError

    def default_start(self, task: TaskSpec) -> str:
        raise NotImplementedError

    def execute(self, action: Action) -> str:
        """Carry out one (non-final) action; return feedback or raise ActionError."""
        raise NotImplementedError

    # -- lifecycle ---------------------------------------------------------------------
    @property
    def s(self) -> BrowserSession:
        if self.session is None:
            raise RuntimeError("environment not started; call start() first")
        return self.session

    def frame_flags(self, options: dict[str, Any]) -> tuple[str, ...] | None:
        """The launch flags for frames drawn on demand, or None for Chromium's own clock."""
        if not self.begin_frames:
            return None
        device = self.screenshot_scale == "device"
        return begin_frame_flags(float(options.get("device_scale_factor", 1)) if device else 1.0)

    def start(self) -> None:
        self.session = launch(self.context_options, args=self.chromium_args, begin_frames=self.frame_flags)
        self.frames = BeginFrames(self.session) if self.session.begin_frames else VsyncFrames(self.session)
        self.s.page.goto(APP_ORIGIN + "/", wait_until="load")
        vw, vh, dpr = self.s.page.evaluate("() => [innerWidth, innerHeight, devicePixelRatio]")
        self.css_size = (vw, vh)
        self.start_size = (vw, vh)
        self.dpr = float(dpr)
        self.scale = self.dpr if self.screenshot_scale == "device" else 1.0

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
            self.frames = None

    def kill(self) -> None:
        if self.session is not None:
            self.session.kill()

    def processes(self) -> list[int]:
        """Chromium (its renderers are below it) and Playwright's driver."""
        s = self.session
        return [] if s is None else [*s.pids, *([s.driver_pid] if s.driver_pid else [])]

    def healthy(self) -> bool:
        s = self.session
        if s is None or not s.alive() or not s.browser.is_connected() or s.page.is_closed():
            return False
        try:
            return s.page.evaluate("() => !!window.guiforge") is True
        except Exception:
            return False

    # -- episode -----------------------------------------------------------------------
    def start_route(self, task: TaskSpec) -> str:
        start = task.setup.get("start")
        if not start:
            return self.default_start(task)
        if start in APP_NAMES:
            return app_info(start).home
        if not str(start).startswith("/"):
            raise ValueError(f"task {task.task_id}: setup.start must be an app name or a path like /mail/inbox, not {start!r}")
        return str(start)

    def reset(self, task: TaskSpec) -> Observation:
        apps = task.setup.get("apps", {})
        unknown = sorted(set(apps) - set(APP_NAMES)) + sorted(set(task.apps) - set(APP_NAMES))
        if unknown:
            raise ValueError(f"task {task.task_id}: unknown web apps {unknown}; known: {', '.join(APP_NAMES)}")
        system = dict(task.setup.get("system", {}))
        presentation = task.presentation or {}
        shown = {k: presentation[k] for k in _DRAWN if presentation.get(k)}
        if "browser" in shown:  # the task's other apps are open in tabs of their own
            shown["browser"] = {**shown["browser"], "apps": list(task.apps)}
        if shown:
            system["presentation"] = shown
        resized = self.fit_viewport(presentation.get("viewport"), task.task_id)
        start = self.start_route(task)
        self.task, self.answer, self.status = task, None, None
        self.seq += 1
        # Serialised on every reset (~0.3 ms): a cache keyed on the setup object would serve
        # stale state for a dict mutated in place or a new dict at a recycled id().
        seed = json.dumps({"apps": apps, "system": system, "start": start, "episode": self.seq})
        self.clear_input()  # before the scan, so hover state cannot differ from the screenshot
        loaded = self.js_sync(_LOAD, seed) if self.s.page.url.startswith(APP_ORIGIN) else None
        if loaded is None:  # the page left the apps (or never loaded them): reload them
            self.s.page.goto(APP_ORIGIN + start, wait_until="load")
            if self.js_sync(_LOAD, seed) is None:
                raise RuntimeError(f"the apps page did not load at {APP_ORIGIN + start}; check guiforge/envs/apps/static")
        if resized:  # the resize's own frame, drawn after the new state (its resize event renders it)
            self.frames.flush()
        await_settled(self)
        # loadState cleared storage and cookies in the page; the back history lives in the browser
        shot, info = self.look(also=(("Page.resetNavigationHistory", {}),))
        shown = (info or {}).get("episode")
        if shown != self.seq:  # the first frame must show this task's state, not the last one's
            raise EnvFailure(f"reset {task.task_id}: the page shows the state of episode {shown}, not of "
                             f"this reset ({self.seq}); the instance will be replaced")
        return self.observation(shot, info)

    def fit_viewport(self, viewport: Any, task_id: str = "") -> bool:
        """Resize the page to a task's viewport (its presentation), or back to the one the
        instance started with: one instance serves every screen size, so a task's size costs
        one relayout, not a browser of its own."""
        size = tuple(int(v) for v in viewport) if viewport else self.start_size
        if not size or size == tuple(self.css_size):
            return False
        width, height = size
        if not (240 <= width <= 3840 and 240 <= height <= 2160):
            raise ValueError(f"task {task_id}: presentation.viewport {list(size)} is outside 240..3840 x 240..2160")
        assert self.frames is not None
        if not isinstance(self.frames, BeginFrames):
            # Chromium's own clock; Playwright must know the size for page.screenshot
            self.s.page.set_viewport_size({"width": width, "height": height})
        else:
            # Frames on demand: our own channel (Playwright's call left a frame pending for
            # good when two resizes came with no frame drawn between); reset draws the
            # resize's frame at once (frames.flush). page.screenshot is not used here.
            self.s.cdp.send("Emulation.setDeviceMetricsOverride", {
                "width": width, "height": height, "deviceScaleFactor": self.dpr, "mobile": self.domain == "mobile",
                "screenWidth": width, "screenHeight": height})
        self.css_size = (width, height)
        return True

    def js(self, function: str, *args: Any) -> Any:
        """Call a page function through CDP; its result comes back as one JSON string."""
        return self._js_value(self.s.cdp.send(*_js_call(function, args)))

    def js_sync(self, function: str, *args: Any, reply_timeout_s: float | None = None) -> Any:
        """:meth:`js` for a function that returns a plain value, not a promise: one task in
        the page, no promise to wait for. ``reply_timeout_s`` bounds the wait for the reply
        (``TimeoutError`` past it)."""
        call = _js_call(function, args, awaits=False)
        return self._js_value(self.s.cdp.send(*call, timeout_s=reply_timeout_s))

    def _js_value(self, reply: dict[str, Any]) -> Any:
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            message = details.get("exception", {}).get("description") or details.get("text")
            raise RuntimeError(f"page script failed on {self.s.page.url}: {message}")
        value = reply["result"].get("value")
        return None if value is None else json.loads(value)

    def clear_input(self) -> None:
        """Subclass hook: clear input-device state (hover, touch) left by the last episode."""

    def observe(self) -> Observation:
        """A frame of the settled page (guiforge.envs.web.settle), numbered with the last
        reset or step."""
        await_settled(self)
        return self.observation(*self.look())

    def look(self, also: tuple[Call, ...] = ()) -> tuple[bytes | None, Any]:
        """The screenshot and the element scan (plus ``also``: calls that do not change the
        screen) sent together, so the capture's encoding overlaps the scan (~5 ms a step)."""
        scan = _js_call(self.scan_script, ())
        if not self.capture_screenshots or not self.captures_frames():
            replies = [self.s.cdp.send(*call) for call in (scan, *also)]
            return self.screenshot(), self._js_value(replies[0])
        assert self.frames is not None
        params = self.capture_params()
        shot, scanned, *_ = self.s.cdp.send_together([self.frames.capture_call(params), scan, *also])
        return self.frames.image(shot, params), self._js_value(scanned)

    def observation(self, shot: bytes | None, info: dict[str, Any] | None) -> Observation:
        """Screenshot + the page's element scan -> Observation (geometry in screenshot pixels)."""
        info = info or {"elements": [], "focus": {}, "path": self.s.page.url}
        width, height = self.frame_size()
        elements = []
        for el in info["elements"]:
            x, y, w, h = (v * self.scale for v in el["box"])
            el["box"] = [round(x), round(y), round(w), round(h)]
            el["grid"] = list(to_grid(x + w / 2, y + h / 2, width, height))
            elements.append(el)
        debug = {"elements": elements, "focus": info["focus"], "path": info["path"],
                 "css_viewport": list(self.css_size), "scale": self.scale}
        return Observation(screenshot=shot, width=width, height=height, format=self.image_format, debug=debug,
                           seq=self.seq)

    def captures_frames(self) -> bool:
        """Whether frames come from the frame source (below) rather than page.screenshot."""
        return self.scale == 1.0 or isinstance(self.frames, BeginFrames)

    def frame_size(self) -> tuple[int, int]:
        """The screenshot's pixel size: a frame drawn on demand at a device scale has its
        surface's size (rounded up); page.screenshot rounds."""
        width, height = self.css_size
        if self.scale == 1.0:
            return width, height
        if isinstance(self.frames, BeginFrames):
            return math.ceil(width * self.scale - 1e-6), math.ceil(height * self.scale - 1e-6)
        return round(width * self.scale), round(height * self.scale)

    def screenshot(self) -> bytes | None:
        """Frames come from the frame source (a frame drawn now on the headless shell, a phone's
        in device pixels too; else CDP's capture), with optimizeForSpeed: lossless and about
        half of page.screenshot's time. On Chromium's own clock, device-pixel phone frames
        need a scaled clip, and CDP's clip drops Playwright's DPR emulation, so those go
        through page.screenshot, which restores it. The caret is hidden by the apps' CSS, so
        identical screens give identical bytes."""
        if not self.capture_screenshots:
            return None
        if not self.captures_frames():
            opts: dict[str, Any] = {"type": self.image_format, "scale": "device"}
            if self.image_format == "jpeg":
                opts["quality"] = self.jpeg_quality
            return self.s.page.screenshot(**opts)
        assert self.frames is not None
        return self.frames.capture(self.capture_params())

    def capture_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"format": self.image_format, "optimizeForSpeed": True}
        if self.image_format == "jpeg":
            params["quality"] = self.jpeg_quality
        return params

    def step(self, action: Action) -> StepResult:
        self.seq += 1
        try:
            action.check_domain(self.domain)
        except ValueError as exc:
            return self._failed(str(exc))
        if action.type in ("answer", "terminate"):
            return self.finish(action)
        assert self.frames is not None
        try:
            late = 0.0 if action.type in self.frame_actions else LATE_CLOCK_S
            with self.frames.pumping(after_s=late):  # the page has a clock while the action runs
                feedback = self.execute(action)
        except ActionError as exc:
            return self._failed(str(exc))
        obs = self.observe()
        obs.feedback = feedback
        return StepResult(obs, feedback=feedback)

    def _failed(self, message: str) -> StepResult:
        obs = self.observe()
        obs.feedback = message
        return StepResult(obs, feedback=message, error=message)

    def state_stamp(self) -> str | None:
        # hashed in the page: a few bytes over CDP instead of the whole state (~100 KB on a phone)
        stamp = self.s.page.evaluate("() => window.guiforge && guiforge.stateStamp ? guiforge.stateStamp() : null")
        return None if stamp is None else f"{stamp}|{self.answer!r}|{self.status!r}"

    def final_state(self) -> FinalState:
        # as one JSON string: Playwright's own serialization of a ~100 KB object tree is ~10x slower
        apps = json.loads(self.s.page.evaluate("() => JSON.stringify(window.guiforge ? guiforge.getState() : null)"))
        if apps is None:
            raise RuntimeError("the app page is gone; the final state cannot be read")
        # s0 for the side-damage check: the seeded apps, byte-identical to what the page loaded
        # (preparers.web_apps.canonical); an app the task did not seed starts empty
        initial = (self.task.setup.get("apps") or {}) if self.task is not None else None
        return FinalState(apps=apps, answer=self.answer, status=self.status, initial_apps=initial)
