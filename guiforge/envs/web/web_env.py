"""The web domain: a desktop viewport, mouse and keyboard."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Playwright

from guiforge.envs.actions import Action
from guiforge.envs.apps import APP_NAMES, app_info
from guiforge.envs.base import TaskSpec
from guiforge.envs.web.keys import chord
from guiforge.envs.web.page_env import ActionError, PageEnv
from guiforge.envs.web.routing import APP_HOST

WHEEL_NOTCH_PX = 100


class WebEnv(PageEnv):
    domain = "web"
    default_viewport = (1280, 720)
    frame_actions = frozenset({"scroll", "drag", "back", "wait"})  # wheel acks, rAF waits

    def context_options(self, pw: Playwright) -> dict[str, Any]:
        w, h = self.spec.viewport or self.default_viewport
        return {"viewport": {"width": w, "height": h}, "device_scale_factor": 1}

    def default_start(self, task: TaskSpec) -> str:
        return app_info(task.apps[0]).home if task.apps else "/"

    def clear_input(self) -> None:
        if self._mouse_used:
            assert self.frames is not None
            with self.frames.pumping():  # a lone pointer move is acknowledged at a frame
                self.s.page.mouse.move(0, 0)  # no hover left over from the last episode
            self._mouse_used = False

    _mouse_used = False

    def execute(self, action: Action) -> str:
        page = self.s.page
        t = action.type
        self._mouse_used = self._mouse_used or t in ("click", "double_click", "right_click", "drag", "scroll")
        if t in ("click", "double_click", "right_click"):
            x, y = self.point(action.x, action.y)
            button = "right" if t == "right_click" else (action.button or "left")
            count = 2 if t == "double_click" else 1
            verb = t.replace("_", " ") + ("ed" if t == "click" else "")
            return self.pointer(verb, x, y, lambda: page.mouse.click(x, y, button=button, click_count=count))
        if t == "drag":
            x, y = self.point(action.x, action.y)
            x2, y2 = self.point(action.x2, action.y2)
            page.mouse.move(x, y)
            page.mouse.down()
            page.mouse.move(x2, y2, steps=8)
            page.mouse.up()
            return f"dragged from ({round(x)}, {round(y)}) to ({round(x2)}, {round(y2)})"
        if t == "scroll":
            x, y = self.point(action.x, action.y)
            notches = action.amount if action.amount else 3
            dx = {"left": -1, "right": 1}.get(action.direction or "", 0) * notches * WHEEL_NOTCH_PX
            dy = {"up": -1, "down": 1}.get(action.direction or "", 0) * notches * WHEEL_NOTCH_PX
            page.mouse.move(x, y)
            # The scroll a wheel would do, done by the page: under begin-frame control a real
            # wheel over an overflowing list leaves beginFrame unanswered (a mailbox of 150
            # messages hung every scroll until the 30 s deadline).
            page.evaluate(_WHEEL_SCROLL, [x, y, dx, dy])
            self.settle()
            return f"scrolled {action.direction} by {notches}"
        if t == "type":
            return self.type_text(action.text or "")
        if t in ("key", "hotkey"):
            try:
                keys = chord(action.keys or [])
            except ValueError as exc:
                raise ActionError(str(exc)) from None
            page.keyboard.press(keys)
            return f"pressed {keys}"
        if t == "goto":
            return self.open_path(app_path(action.text or ""))
        if t == "back":
            if not self.history_back():
                raise ActionError("there is no previous page to go back to")
            return "went back"
        if t == "wait":
            return self.sleep(action)
        raise ActionError(f"action {t!r} is not supported by the web environment")


# the innermost element under the point that can scroll that way, else the page
_WHEEL_SCROLL = """([x, y, dx, dy]) => {
  let el = document.elementFromPoint(x, y);
  const can = (e) => { const st = getComputedStyle(e);
    return (dy && /(auto|scroll)/.test(st.overflowY) && e.scrollHeight > e.clientHeight) ||
           (dx && /(auto|scroll)/.test(st.overflowX) && e.scrollWidth > e.clientWidth); };
  while (el && el !== document.body && el !== document.documentElement && !can(el)) el = el.parentElement;
  (el && el !== document.body && el !== document.documentElement ? el : document.scrollingElement).scrollBy(dx, dy);
}"""


def app_path(target: str) -> str:
    """What ``goto`` may open: an app name, a path, or a URL on the apps' own origin."""
    text = target.strip()
    if text.lower() in APP_NAMES:
        return app_info(text.lower()).home
    if text.startswith("/"):
        return text
    parts = urlsplit(text if "://" in text else f"http://{text}")
    if parts.hostname == APP_HOST:
        return parts.path or "/"
    raise ActionError(
        f"cannot open {target!r}: the network is blocked here; open one of the local apps "
        f"({', '.join(APP_NAMES)}) or a path like /mail/inbox"
    )
