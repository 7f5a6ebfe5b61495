"""Record a browsing session as a replay recording.

The browser records a HAR itself (``record_har_path``, bodies embedded): the traffic is what
Chromium's own network stack did (cookies, redirects, CORS, HTTP/2), the site sees an
ordinary browser, and nothing sits between page and server that could change timing or
drop a header. Routing every request through ``route.fetch`` instead would refetch from the
driver's HTTP client, and a fulfilled redirect's follow-up escapes routing (see
:mod:`guiforge.envs.replay.router`). The HAR is normalised into a recording when the session
ends; the raw HAR (with the live tokens) only ever exists in a temporary directory.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, sync_playwright

from guiforge.envs.replay.normalize import NormalizerConfig
from guiforge.envs.replay.recording import Recording, from_har
from guiforge.envs.web.browser import CHROMIUM, CHROMIUM_ARGS

# The environment's flags, less the resolver rule that walls off the network: recording is
# the one time the real site must be reachable.
RECORD_ARGS = tuple(a for a in CHROMIUM_ARGS if not a.startswith("--host-resolver-rules"))


def record(url: str, out: str | Path | None = None, drive: Callable[[Page], None] | None = None,
           viewport: tuple[int, int] = (1280, 720), config: NormalizerConfig | None = None,
           settle_ms: int = 500) -> Recording:
    """Open ``url``, let ``drive(page)`` browse (clicks, forms, further pages), and return
    (and with ``out``, save) the normalised recording. Run it off any thread that already
    uses Playwright's sync API."""
    with tempfile.TemporaryDirectory(prefix="guiforge-har-") as tmp:
        har_path = Path(tmp) / "session.har"
        started = time.time()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=list(RECORD_ARGS), headless=True)
            try:
                context = browser.new_context(
                    viewport={"width": viewport[0], "height": viewport[1]}, device_scale_factor=1,
                    locale="en-US", timezone_id="UTC", service_workers="block",  # workers would hide requests
                    record_har_path=str(har_path), record_har_content="embed",
                )
                page = context.new_page()
                page.goto(url, wait_until="load")
                _quiet(page, settle_ms)
                if drive is not None:
                    drive(page)
                    _quiet(page, settle_ms)
                context.close()  # writes the HAR
            finally:
                browser.close()
        har = json.loads(har_path.read_text())
        recording = from_har(har, start_url=url, config=config, window=(started, time.time()), viewport=viewport)
    if out is not None:
        recording.save(out)
    return recording


def _quiet(page: Page, settle_ms: int) -> None:
    """Let late requests (fetches after load) finish so the HAR holds their responses."""
    with contextlib.suppress(PlaywrightError):  # a page that polls forever never idles: take what came
        page.wait_for_load_state("networkidle", timeout=max(settle_ms * 10, 5000))
    page.wait_for_timeout(settle_ms)
