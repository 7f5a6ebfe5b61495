"""One recording per test session: the volatile site is started on 127.0.0.1, browsed once
(load, fill the form, submit, follow the redirect) and stopped. A listener then takes over
its port, so any replay request that reached the network would be counted."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from volatile_site import VolatileSite

from guiforge.envs.replay import NormalizerConfig, record
from guiforge.testing.listener import CountingListener

# A site-specific token (the API's request id) shows the configurable part of the normaliser.
CONFIG = NormalizerConfig(token_patterns=[r'"request_id":\s*"([^"]+)"'])


def browse(page) -> None:
    page.fill("#item", "Teapot")
    page.click("#order")
    page.wait_for_url("**/thanks?order=*")


@pytest.fixture(scope="session")
def recorded(tmp_path_factory):
    """(recording path, the stopped site, a listener on its port)."""
    site = VolatileSite().start()
    path = Path(tmp_path_factory.mktemp("replay")) / "volatile-shop.json"
    try:
        with ThreadPoolExecutor(1) as pool:  # Playwright's sync API wants a thread of its own
            pool.submit(record, site.url, path, browse, config=CONFIG).result(timeout=120)
    finally:
        site.stop()
    listener = CountingListener("127.0.0.1", site.port, backlog=16)  # takes over the port the site used
    yield path, site, listener
    listener.close()
