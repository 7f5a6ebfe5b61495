"""What the web and mobile executors share: grid points to page points, the element under a
point, typing into the focused field, in-app paths, history, and waiting with the page running.
A mixin of :class:`guiforge.envs.web.page_env.PageEnv` (it uses the page and its scripts)."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Error as PlaywrightError

from guiforge.envs.actions import Action, to_pixels


class ActionError(Exception):
    """The agent's action could not be carried out (not an environment fault)."""


HIT_SCRIPT = "(x, y) => window.guiforge ? guiforge.hit(x, y) : null"
FOCUS_SCRIPT = "() => window.guiforge ? guiforge.focusInfo() : {editable: false}"
# The apps' own navigation where there is one (it records the history's depth for the
# browser bar's back and forward buttons); a replayed site gets a bare pushState.
_OPEN = ("(p) => { if (window.guiforge && guiforge.go) return guiforge.go(p);"
         " history.pushState(null, '', p); dispatchEvent(new PopStateEvent('popstate')); }")
SETTLE_SCRIPT = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"
BACK_FRAMES = 120
# Back is done once its popstate has been handled; a back that goes nowhere is given up after
# BACK_FRAMES animation frames (frames, not seconds: a loaded renderer draws them slower).
_BACK = ("() => new Promise(r => { addEventListener('popstate', () => requestAnimationFrame(() => r(true)), {once: true});"
         f" history.back(); let n = 0; const tick = () => (++n > {BACK_FRAMES} ? r(false) : requestAnimationFrame(tick));"
         " requestAnimationFrame(tick); })")


class PageActions:
    """Helpers for the executors of a page environment."""

    def point(self, gx: int | None, gy: int | None) -> tuple[float, float]:
        """Grid point -> CSS pixel of the page (via the screenshot's pixel grid)."""
        if gx is None or gy is None:
            return (self.css_size[0] / 2, self.css_size[1] / 2)
        px, py = to_pixels(gx, gy, *self.frame_size())
        return (px / self.scale, py / self.scale)

    def hit(self, x: float, y: float) -> dict[str, Any] | None:
        return self.js(self.hit_script, x, y)

    def target(self, x: float, y: float) -> str | None:
        """The label of the interactive element under a CSS point, or None."""
        hit = self.hit(x, y)
        if not hit or not hit.get("interactive"):
            return None
        return hit.get("label") or hit.get("id") or "an unlabeled control"

    def pointer(self, verb: str, x: float, y: float, do) -> str:
        """Run a pointer action; report what it hit, or an ActionError when it hit nothing
        interactive (the action still happened, as it would on a real screen)."""
        label = self.target(x, y)
        do()
        if label is None:
            raise ActionError(f"{verb} at ({round(x)}, {round(y)}) hit nothing clickable")
        return f"{verb} “{label}”"

    def type_text(self, text: str) -> str:
        focus = self.js(self.focus_script)
        if not focus.get("editable"):
            raise ActionError("nothing editable has focus; tap or click a text field first")
        keyboard = self.s.page.keyboard
        for i, chunk in enumerate(text.split("\n")):
            if i:
                keyboard.press("Enter")
            if chunk:
                keyboard.insert_text(chunk)
        return f"typed {len(text)} characters into “{focus.get('label') or 'the focused field'}”"

    def open_path(self, path: str) -> str:
        """Open a path of the apps; one the page refuses (``//host/x`` is another origin to
        pushState) is the agent's error, not the environment's."""
        try:
            self.s.page.evaluate(_OPEN, path)
        except PlaywrightError as exc:
            reason = str(exc).splitlines()[0].removeprefix("Page.evaluate: ")
            raise ActionError(f"cannot open {path!r}: {reason}; give an app name or a path like /mail/inbox") from None
        return f"opened {path}"

    def history_back(self) -> bool:
        hist = self.s.cdp.send("Page.getNavigationHistory")
        if hist["currentIndex"] <= 0:
            return False
        self.s.page.evaluate(_BACK)
        return True

    def settle(self) -> None:
        self.s.page.evaluate(SETTLE_SCRIPT)

    def sleep(self, action: Action) -> str:
        seconds = min(max(action.amount if action.amount is not None else 1, 0), 5)
        self.wait(seconds)
        return f"waited {seconds}s"

    def wait(self, seconds: float) -> None:
        """Let time pass with the page running (its frames pumped, if it has no clock)."""
        self.s.page.wait_for_timeout(seconds * 1000)
