"""The mobile domain: the same apps in a phone viewport (Playwright device emulation) with
touch input, a launcher home screen, and Android-like back / home."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Playwright

from guiforge.envs.actions import Action
from guiforge.envs.apps import APP_NAMES
from guiforge.envs.base import TaskSpec
from guiforge.envs.web.page_env import ActionError, PageEnv

DEFAULT_DEVICE = "Pixel 7"
LONG_PRESS_S = 0.8
SWIPE_MOVES = 6
SWIPE_REST_S = 0.12


class MobileEnv(PageEnv):
    domain = "mobile"
    frame_actions = frozenset({"tap", "long_press", "swipe", "back", "wait"})  # touch acks, rAF waits

    def context_options(self, pw: Playwright) -> dict[str, Any]:
        name = self.spec.device or DEFAULT_DEVICE
        devices = pw.devices
        if name not in devices:
            raise ValueError(f"unknown device {name!r}; use a Playwright device name such as 'Pixel 7'")
        opts = {k: v for k, v in devices[name].items() if k != "default_browser_type"}
        if self.spec.viewport:
            w, h = self.spec.viewport
            opts["viewport"] = {"width": w, "height": h}
            opts["screen"] = {"width": w, "height": h}
        return opts

    def default_start(self, task: TaskSpec) -> str:
        return "/"  # a phone starts on its home screen; the agent opens the app

    def _touch(self, kind: str, points: list[tuple[float, float]]) -> None:
        self.s.cdp.send("Input.dispatchTouchEvent",
                        {"type": kind, "touchPoints": [{"x": x, "y": y} for x, y in points]})

    def execute(self, action: Action) -> str:
        page = self.s.page
        t = action.type
        if t == "tap":
            x, y = self.point(action.x, action.y)
            return self.pointer("tapped", x, y, lambda: page.touchscreen.tap(x, y))
        if t == "long_press":
            x, y = self.point(action.x, action.y)

            def press() -> None:
                self._touch("touchStart", [(x, y)])
                self.wait(LONG_PRESS_S)
                self._touch("touchEnd", [])

            return self.pointer("long-pressed", x, y, press)
        if t == "swipe":
            x, y = self.point(action.x, action.y)
            x2, y2 = self.point(action.x2, action.y2)
            self._touch("touchStart", [(x, y)])
            for i in range(1, SWIPE_MOVES + 1):
                f = i / SWIPE_MOVES
                self._touch("touchMove", [(x + (x2 - x) * f, y + (y2 - y) * f)])
            # Rest before lifting so no fling follows: the content moves by the finger's
            # distance, the same every time, instead of by a timing-dependent momentum.
            self.wait(SWIPE_REST_S)
            self._touch("touchMove", [(x2, y2)])
            self._touch("touchEnd", [])
            self.settle()
            return f"swiped from ({round(x)}, {round(y)}) to ({round(x2)}, {round(y2)})"
        if t == "type":
            return self.type_text(action.text or "")
        if t == "enter":
            page.keyboard.press("Enter")
            return "pressed enter"
        if t == "back":
            return self.back()
        if t == "home":
            self.open_path("/")
            return "went to the home screen"
        if t == "open_app":
            app = (action.app or "").strip().lower()
            if app not in APP_NAMES:
                raise ActionError(f"no app named {action.app!r} on this phone; apps: {', '.join(APP_NAMES)}")
            self.open_path(f"/{app}")
            return f"opened {app}"
        if t == "wait":
            return self.sleep(action)
        raise ActionError(f"action {t!r} is not supported by the mobile environment")

    def back(self) -> str:
        """Android back: close what is open, else go back, else leave the app for home."""
        page = self.s.page
        if page.evaluate("() => guiforge.back()") == "closed":
            return "closed the open panel"
        if page.evaluate("() => guiforge.path()") == "/":
            raise ActionError("already on the home screen; there is nothing to go back to")
        if self.history_back():
            return "went back"
        self.open_path("/")
        return "left the app for the home screen"
