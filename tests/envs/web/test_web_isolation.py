"""Network isolation with real sockets: a listener on 127.0.0.2 (loopback, but not the
127.0.0.1/localhost the browser may reach) counts every connection the page attempts by
fetch, img, iframe, WebSocket, EventSource, beacon, preconnect, dns-prefetch and hostnames.
A bare Chromium proves the same probes do reach it, so the test can fail. The browser's
127.0.0.1 is its own (a network namespace): the host's is out of reach too. UDP (WebRTC)
and non-loopback addresses: tests/envs/web/test_web_netns.py."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import Error as PlaywrightError

from guiforge.envs.web.browser import CHROMIUM
from guiforge.envs.web.routing import APP_ORIGIN
from guiforge.testing.listener import CountingListener

PROBE = """(base) => {
  const u = (p) => base + p;
  fetch(u('/fetch')).catch(() => {});
  fetch(u('/fetch-nocors'), {mode: 'no-cors'}).catch(() => {});
  const img = new Image(); img.src = u('/img.png'); document.body.appendChild(img);
  const frame = document.createElement('iframe'); frame.src = u('/frame'); document.body.appendChild(frame);
  try { new WebSocket(base.replace('http', 'ws') + '/ws'); } catch (e) {}
  try { new EventSource(u('/events')); } catch (e) {}
  try { navigator.sendBeacon(u('/beacon'), 'x'); } catch (e) {}
  for (const rel of ['preconnect', 'dns-prefetch', 'prefetch', 'preload']) {
    const l = document.createElement('link'); l.rel = rel; l.href = u('/' + rel); l.as = 'fetch'; document.head.appendChild(l);
  }
  return true;
}"""


@pytest.fixture
def listener():
    try:
        lst = CountingListener("127.0.0.2", lifetime_s=120)
    except OSError as exc:
        pytest.skip(f"cannot bind 127.0.0.2 here: {exc}")
    yield lst
    lst.close()


def _probe(page, bases: list[str]) -> None:
    for base in bases:
        page.evaluate(PROBE, base)
    time.sleep(1.5)  # preconnects and sockets are asynchronous


def test_isolated_browser_reaches_nothing(direct_web, listener):
    page = direct_web.s.page
    page.goto(APP_ORIGIN + "/", wait_until="load")
    bases = [f"http://127.0.0.2:{listener.port}", f"http://probe.example:{listener.port}",
             f"http://127.0.0.2.nip.io:{listener.port}", f"https://127.0.0.2:{listener.port}"]
    blocked_before = len(direct_web.s.router.blocked)
    _probe(page, bases)
    assert listener.connections == 0
    assert len(direct_web.s.router.blocked) > blocked_before  # the route handler saw and aborted them
    with pytest.raises(Exception, match="ERR_"):
        page.goto(f"http://127.0.0.2:{listener.port}/nav", timeout=5000)
    assert listener.connections == 0


def test_isolated_browser_does_not_reach_the_hosts_127_0_0_1(direct_web):
    """The browser's loopback is its own (guiforge.envs.web.netns): a host service on
    127.0.0.1 (the Prefect API, a model server) is out of a page's reach, while a server on
    the browser's own loopback is reached, so the zero is isolation, not a broken probe."""
    if direct_web.s.netns is None:
        pytest.skip("Chromium runs in the host's network namespace here (not root)")
    local = CountingListener("127.0.0.1", lifetime_s=120)
    try:
        page = direct_web.s.page
        # The previous test's blocked navigation can commit its error page late and abort
        # the next goto: retry until the apps page has loaded.
        for attempt in range(10):
            try:
                page.goto(APP_ORIGIN + "/", wait_until="load")
                break
            except PlaywrightError as exc:
                if "interrupted by another navigation" not in str(exc) or attempt == 9:
                    raise
                time.sleep(0.2)
        own = listener_in(direct_web.s.netns)  # a server on the browser's own 127.0.0.1
        try:
            page.evaluate("(u) => fetch(u).catch(() => {})", f"http://127.0.0.1:{own.port}/ok")
            for _ in range(40):  # up to 2 s on a busy machine
                if own.connections:
                    break
                time.sleep(0.05)
            assert own.connections >= 1
        finally:
            own.close()
        page.evaluate("(u) => fetch(u).catch(() => {})", f"http://127.0.0.1:{local.port}/ok")
        _probe(page, [f"http://127.0.0.1:{local.port}", f"http://localhost:{local.port}"])
        assert local.connections == 0
    finally:
        local.close()


def listener_in(netns: int) -> CountingListener:
    """A CountingListener whose socket lives in the network namespace ``netns``."""
    from guiforge.envs.web.netns import inside

    return inside(netns, lambda: CountingListener("127.0.0.1", lifetime_s=60))


def test_bare_chromium_does_reach_the_listener(listener):
    """Control: without the flags and routes the same probes connect."""

    def bare() -> None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.set_content("<html><body></body></html>")
            _probe(page, [f"http://127.0.0.2:{listener.port}"])
            browser.close()

    with ThreadPoolExecutor(1) as pool:  # the module's direct_web owns this thread's Playwright
        pool.submit(bare).result()
    assert listener.connections >= 1


# A page's try at the browser's own DevTools server (guiforge.envs.web.cdp listens on
# 127.0.0.1): the WebSocket is refused (pages send an Origin header), the HTTP answers carry
# no CORS header, so the page cannot read the target list or version either.
DEVTOOLS_PROBE = """async ([ws, http]) => {
  const socket = await new Promise((resolve) => {
    const s = new WebSocket(ws);
    s.onopen = () => { s.close(); resolve('open'); };
    s.onerror = () => resolve('refused');
    setTimeout(() => resolve('timeout'), 3000);
  });
  const read = async (path) => {
    try { return await (await fetch(http + path)).text(); } catch (e) { return 'unreadable'; }
  };
  return {socket, version: await read('/json/version'), list: await read('/json/list')};
}"""


def test_a_page_cannot_use_the_devtools_port(direct_web):
    page = direct_web.s.page
    page.goto(APP_ORIGIN + "/", wait_until="load")
    ws = direct_web.s.devtools
    http = "http://" + ws.split("/")[2]
    assert http.startswith("http://127.0.0.1:")
    seen = page.evaluate(DEVTOOLS_PROBE, [ws, http])
    assert seen == {"socket": "refused", "version": "unreadable", "list": "unreadable"}
    # control: the same URL from a client without an Origin header (ours) is answered
    from websockets.sync.client import connect

    from guiforge.envs.web.netns import connect_in

    netns = direct_web.s.netns  # the browser's own network namespace, where its port is
    sock = None if netns is None else connect_in(netns, ("127.0.0.1", int(http.rsplit(":", 1)[1])), 10)
    with connect(ws, sock=sock, compression=None) as client:
        client.send('{"id": 1, "method": "Browser.getVersion"}')
        assert '"product"' in client.recv(timeout=10)
    assert direct_web.observe().screenshot  # the env's own channel still works
