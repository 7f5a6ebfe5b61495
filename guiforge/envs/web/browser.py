"""One Chromium per environment: launch with the isolation flags, in a network namespace
that holds only its own loopback (guiforge.envs.web.netns), from a minimal environment;
one context and one page that live as long as the environment, with peer-to-peer APIs
removed from every page; a CDP channel of our own to that page (the hot path, see
guiforge.envs.web.cdp), and a hard kill that needs no Playwright call (the manager uses
it when the actor thread is stuck inside Playwright)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from playwright.sync_api import (
    Browser,
    BrowserContext,
    CDPSession,
    Page,
    Playwright,
    sync_playwright,
)

from guiforge.envs.web.cdp import DEVTOOLS_FLAGS, PageChannel, devtools_url
from guiforge.envs.web.driver import in_own_session
from guiforge.envs.web.netns import available, host_netns, isolated_executable, open_netns
from guiforge.envs.web.routing import Router


def _chromium() -> str:
    """Debian's Chromium: its headless shell (the same build without the desktop browser
    around it: about a third less CPU per reset) when installed, else the full browser."""
    if os.environ.get("GUIFORGE_CHROMIUM"):
        return os.environ["GUIFORGE_CHROMIUM"]
    shell = "/usr/bin/chromium-headless-shell"
    return shell if os.path.exists(shell) else "/usr/bin/chromium"


CHROMIUM = _chromium()


def begin_frames_supported(executable: str | None = None) -> bool:
    """Begin-frame control (see guiforge.envs.web.frames) exists in the headless shell only;
    GUIFORGE_BEGIN_FRAMES=0 turns it off (Chromium's own 60 Hz clock instead)."""
    if os.environ.get("GUIFORGE_BEGIN_FRAMES", "1") == "0":
        return False
    name = Path(executable or CHROMIUM).name
    return "headless-shell" in name or "headless_shell" in name


CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
    # WebRTC sends UDP (STUN to an IP literal) past routes and resolver rules: no UDP but
    # through a proxy, and there is none
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)
# Peer-to-peer and datagram APIs, removed from every page before its scripts run (a recorded
# third-party script replays too): the flags and the namespace stop the packets, this stops
# the attempt.
NO_PEER_TO_PEER = """(() => {
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCIceCandidate',
      'RTCSessionDescription', 'RTCRtpSender', 'RTCRtpReceiver', 'RTCRtpTransceiver', 'RTCDtlsTransport',
      'RTCIceTransport', 'RTCSctpTransport', 'RTCCertificate', 'RTCDTMFSender', 'WebTransport',
      'WebTransportError', 'WebTransportBidirectionalStream', 'WebTransportDatagramDuplexStream']) {
    try { delete globalThis[name]; } catch (e) {}
  }
})();"""
# Chromium's whole environment: nothing of the caller's (API keys, cloud credentials)
BROWSER_ENV_KEYS = ("PATH", "HOME", "LANG", "TZ", "FONTCONFIG_PATH", "XDG_CACHE_HOME")


@dataclass
class BrowserSession:
    playwright: Playwright
    browser: Browser
    context: BrowserContext
    page: Page
    cdp: PageChannel  # our own channel to the page (guiforge.envs.web.cdp)
    router: RouterLike
    devtools: str  # the browser's DevTools WebSocket URL
    pids: list[int] = field(default_factory=list)  # the browser process (its own group)
    driver_pid: int | None = None  # Playwright's node driver that launched it
    begin_frames: bool = False  # pages are created under begin-frame control
    netns: int | None = None  # the browser's network namespace (an fd), when it has its own
    group: int | None = None  # the browser's process group (the namespace wrapper leads it)
    _clock: PageChannel | None = None

    def clock_channel(self) -> PageChannel:
        """A second channel to the page for the frame clock's thread (opened once)."""
        if self._clock is None:
            self._clock = PageChannel(self.devtools, self.cdp.target_id, netns=self.netns)
        return self._clock

    def renew(self, options: dict[str, Any], router: RouterLike,
              prepare: Callable[[BrowserContext], None] | None = None) -> None:
        """Swap in a fresh context (new cookies, storage, cache, history) with its router."""
        old = self.context
        context, page, cdp = open_context(self.browser, self.devtools, options, router, prepare, self.begin_frames,
                                          self.netns)
        self._close_channels()
        self.context, self.page, self.cdp, self.router = context, page, cdp, router
        with contextlib.suppress(Exception):
            old.close()

    def _close_channels(self) -> None:
        for channel in (self.cdp, self._clock):
            if channel is not None:
                with contextlib.suppress(Exception):
                    channel.close()
        self._clock = None

    def close(self) -> None:
        self._close_channels()
        with contextlib.suppress(Exception):
            self.browser.close()
        with contextlib.suppress(Exception):
            self.playwright.stop()
        self._close_netns()

    def _close_netns(self) -> None:
        fd, self.netns = self.netns, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def kill(self) -> None:
        """SIGKILL the browser's process group; touches no Playwright object."""
        if self.group is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.group, signal.SIGKILL)
        for pid in self.pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if self.driver_pid is not None:  # unblocks any thread waiting on Playwright
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.driver_pid, signal.SIGKILL)
        self._close_netns()

    def alive(self) -> bool:
        return bool(self.pids) and all(_running(pid) for pid in self.pids)


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")  # zombies are dead


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _is_driver(pid: int | None) -> bool:
    if not pid or pid == os.getpid():
        return False
    try:
        return "node" in Path(f"/proc/{pid}/comm").read_text()
    except OSError:
        return False


class RouterLike(Protocol):
    """What serves a context's requests: :class:`Router` (the apps) or a replay router."""

    blocked: list[str]

    def install(self, context: BrowserContext) -> None: ...


def open_context(browser: Browser, devtools: str, options: dict[str, Any], router: RouterLike,
                 prepare: Callable[[BrowserContext], None] | None = None,
                 begin_frames: bool = False, netns: int | None = None) -> tuple[BrowserContext, Page, PageChannel]:
    """One isolated context with its router, one page and our CDP channel to it; ``prepare``
    runs on the context before the page exists (clocks, init scripts). With ``begin_frames``
    the page draws only when asked (guiforge.envs.web.frames)."""
    browser_cdp = browser.new_browser_cdp_session() if begin_frames else None
    known = _context_ids(browser_cdp) if browser_cdp else set()
    context = browser.new_context(
        service_workers="block", accept_downloads=False, locale="en-US", timezone_id="UTC", **options,
    )
    try:
        context.add_init_script(NO_PEER_TO_PEER)
        router.install(context)
        if prepare is not None:
            prepare(context)
        if browser_cdp is not None:
            page, target_id = _controlled_page(context, browser_cdp, known)
        else:
            page = context.new_page()
            target_id = _target_id(context, page)
        page.on("dialog", lambda d: d.dismiss())  # the apps never open native dialogs
        return context, page, PageChannel(devtools, target_id, netns=netns)
    except BaseException:
        with contextlib.suppress(Exception):
            context.close()
        raise
    finally:
        if browser_cdp is not None:
            with contextlib.suppress(Exception):
                browser_cdp.detach()


def _target_id(context: BrowserContext, page: Page) -> str:
    session = context.new_cdp_session(page)
    try:
        return session.send("Target.getTargetInfo")["targetInfo"]["targetId"]
    finally:
        session.detach()


def _context_ids(browser_cdp: CDPSession) -> set[str]:
    return set(browser_cdp.send("Target.getBrowserContexts")["browserContextIds"])


def _controlled_page(context: BrowserContext, browser_cdp: CDPSession, known: set[str]) -> tuple[Page, str]:
    """A page under begin-frame control in ``context``: Playwright cannot ask for one, so the
    target is created over CDP in the context Playwright just made (the one id that is new),
    and Playwright adopts it as it adopts any page opened in its context."""
    fresh = _context_ids(browser_cdp) - known
    if len(fresh) != 1:
        raise RuntimeError(f"cannot tell which browser context is new ({len(fresh)} candidates)")
    with context.expect_page() as opened:
        created = browser_cdp.send("Target.createTarget", {"url": "about:blank", "browserContextId": fresh.pop(),
                                                           "enableBeginFrameControl": True})
    return opened.value, created["targetId"]


def launch(context_options: Callable[[Playwright], dict[str, Any]],
           args: tuple[str, ...] = CHROMIUM_ARGS,
           begin_frames: Callable[[dict[str, Any]], tuple[str, ...] | None] | None = None) -> BrowserSession:
    """Start Playwright and Chromium; ``context_options`` gets Playwright (for its device
    descriptors) and returns the options of the one context; ``begin_frames`` gets those
    options and returns the launch flags for a page that draws only when asked (headless
    shell only; guiforge.envs.web.frames.begin_frame_flags), or None for Chromium's clock."""
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"Chromium not found at {CHROMIUM}; apt-get install chromium chromium-headless-shell or set GUIFORGE_CHROMIUM")
    isolated = available()
    if not isolated:
        _warn_once("Chromium runs in the host's network namespace (needs root and bubblewrap): pages are held "
                   "by the WebRTC flags, page scripts, resolver rules and routes only; see SECURITY.md")
    executable = isolated_executable(CHROMIUM) if isolated else CHROMIUM
    env = {k: os.environ[k] for k in BROWSER_ENV_KEYS if k in os.environ}
    in_own_session()  # a stop for our process group reaches guiforge, never the pages
    pw = sync_playwright().start()
    netns = None
    try:
        options = context_options(pw)
        frame_flags = begin_frames(options) if begin_frames and begin_frames_supported() else None
        controlled = frame_flags is not None
        flags = list(args) + list(DEVTOOLS_FLAGS) + list(frame_flags or ())
        browser = pw.chromium.launch(executable_path=executable, args=flags, headless=True, env=env)
        info = browser.new_browser_cdp_session().send("SystemInfo.getProcessInfo")
        pids = [p["id"] for p in info["processInfo"] if p["type"] == "browser"]
        if not pids:
            raise RuntimeError("Chromium reported no browser process (SystemInfo.getProcessInfo)")
        if isolated:
            netns = open_netns(pids[0])
            if os.readlink(f"/proc/self/fd/{netns}") == host_netns():
                raise RuntimeError("Chromium started in the host's network namespace; is bubblewrap working?")
        devtools = devtools_url(pids[0])
        router = Router()
        context, page, cdp = open_context(browser, devtools, options, router, begin_frames=controlled, netns=netns)
    except BaseException:
        if netns is not None:
            os.close(netns)
        with contextlib.suppress(Exception):
            pw.stop()
        raise
    return BrowserSession(pw, browser, context, page, cdp, router, devtools, pids, _driver_of(pids[0]),
                          begin_frames=controlled, netns=netns, group=_group(pids[0]))


@cache
def _warn_once(message: str) -> None:
    logging.getLogger("guiforge.envs.web").warning(message)


def _driver_of(pid: int) -> int | None:
    """Playwright's node driver: the browser's parent, or its grandparent through the
    namespace wrapper."""
    for _ in range(3):
        parent = _parent(pid)
        if parent is None or parent <= 1:
            return None
        if _is_driver(parent):
            return parent
        pid = parent
    return None


def _group(pid: int) -> int | None:
    try:
        group = os.getpgid(pid)
    except OSError:
        return None
    return None if group == os.getpgid(0) else group  # never our own group
