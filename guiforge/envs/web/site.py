"""``SiteEnv``: the web adapter over a site a kind declares (guiforge.envs.site_kind): its
pages are served from the kind's directory under ``http://site.guiforge.test`` by a route
handler in the browser context (Playwright's driver runs in the host's namespace, the page
in a loopback-only one, so nothing listens and nothing else is reachable). The element scan,
hit test and focus probe are the generic ones replayed sites use; the final state is what the
kind's ``state_script`` returns, under ``apps["site"]``.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

from playwright.sync_api import BrowserContext, Route, WebSocketRoute

from guiforge.envs.actions import Action
from guiforge.envs.base import EnvSpec, FinalState, Observation, TaskSpec
from guiforge.envs.replay import page_scripts
from guiforge.envs.web.page_env import ActionError
from guiforge.envs.web.settle import await_settled
from guiforge.envs.web.web_env import WebEnv

SITE_HOST = "site.guiforge.test"
SITE_ORIGIN = f"http://{SITE_HOST}"


class SiteRouter:
    """Answers requests for the site's origin from its directory; refuses everything else."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self.served = 0
        self.blocked: list[str] = []

    def install(self, context: BrowserContext) -> None:
        context.route("**/*", self._on_request)
        context.route_web_socket("**/*", self._on_websocket)

    def file(self, path: str) -> Path | None:
        """The file a URL path names inside the site's directory (index.html for a folder)."""
        full = (self.root / path.lstrip("/")).resolve()
        if full.is_dir():
            full = full / "index.html"
        return full if full.is_relative_to(self.root) and full.is_file() else None

    def _on_request(self, route: Route) -> None:
        parts = urlsplit(route.request.url)
        if parts.hostname != SITE_HOST:
            self.blocked.append(route.request.url)
            route.abort("blockedbyclient")
            return
        found = self.file(parts.path)
        if found is None:
            route.fulfill(status=404, body=b"not found", content_type="text/plain")
            return
        self.served += 1
        kind = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
        route.fulfill(status=200, body=found.read_bytes(), headers={"content-type": kind, "cache-control": "no-store"})

    def _on_websocket(self, ws: WebSocketRoute) -> None:
        self.blocked.append(ws.url)
        ws.close(code=1008, reason="network access is blocked in this environment")


class SiteEnv(WebEnv):
    """A web environment over one kind's pages (see the module)."""

    begin_frames = False  # a site's own scripts may wait on requestAnimationFrame: keep Chromium's clock
    scan_script = page_scripts.SCAN
    hit_script = page_scripts.HIT
    focus_script = page_scripts.FOCUS

    def __init__(self, spec: EnvSpec, root: Path, state_script: str, **kwargs: Any):
        super().__init__(spec, **kwargs)
        self.root, self.state_script = Path(root), state_script

    def start(self) -> None:
        super().start()  # the browser, its netns and the apps' context
        self.s.renew(self.context_options(self.s.playwright), SiteRouter(self.root))

    def reset(self, task: TaskSpec) -> Observation:
        page = str(task.setup.get("page") or "index.html").lstrip("/")
        query = task.setup.get("query") or {}
        if SiteRouter(self.root).file(page) is None:
            raise ValueError(f"task {task.task_id}: setup.page {page!r} is not a page of {self.root}")
        self.task, self.answer, self.status = task, None, None
        self.seq += 1
        self.s.context.clear_cookies()
        url = f"{SITE_ORIGIN}/{page}" + (f"?{urlencode(query)}" if query else "")
        self._clear_storage(url)  # the last task's storage is not this one's s0
        self.s.page.goto(url, wait_until="load")
        self.s.cdp.send("Page.resetNavigationHistory")
        return self.observe()

    def _clear_storage(self, url: str) -> None:
        """Empty the site's local and session storage (both outlive a navigation in this tab).
        The document decides, not ``page.url``: a blocked navigation leaves an error page that
        can still carry the site's address and has no storage. Off the site, the site is
        opened first so its storage can be reached."""
        script = ("(origin) => { if (location.origin !== origin) return false;"
                  " localStorage.clear(); sessionStorage.clear(); return true; }")
        if not self.js_sync(script, SITE_ORIGIN):
            self.s.page.goto(url, wait_until="load")
            if not self.js_sync(script, SITE_ORIGIN):
                raise RuntimeError(f"cannot reach the storage of {SITE_ORIGIN}: the page is {self.s.page.url}")

    def execute(self, action: Action) -> str:
        if action.type == "goto":
            url = urljoin(self.s.page.url, (action.text or "").strip())
            if urlsplit(url).hostname != SITE_HOST:
                raise ActionError(f"cannot open {action.text!r}: only this site's pages can be opened here")
            self.s.page.goto(url, wait_until="load")
            await_settled(self)
            return f"opened {urlsplit(url).path}"
        return super().execute(action)

    def state_stamp(self) -> str | None:
        return None  # a site's own state script: read whole every time

    def final_state(self) -> FinalState:
        state = self.s.page.evaluate(self.state_script)
        return FinalState(apps={"site": state}, answer=self.answer, status=self.status)

    def healthy(self) -> bool:
        s = self.session
        if s is None or not s.alive() or not s.browser.is_connected() or s.page.is_closed():
            return False
        try:  # the document must be the site's: not an error page (whatever page.url still says) nor another origin
            return s.page.evaluate("() => location.origin") == SITE_ORIGIN
        except Exception:
            return False
