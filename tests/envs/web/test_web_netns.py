"""Chromium cannot send anything off its own loopback, by any protocol: UDP and TCP
listeners on another loopback address (127.0.0.2), on a non-loopback address of this host
and on the host's 127.0.0.1 count what a page's WebRTC (STUN to an IP literal), WebTransport,
fetch, WebSocket, img, iframe, EventSource, beacon and preconnect attempts deliver. Each
layer is checked alone too (the network namespace with no flags and no page script; the
flags with no namespace), and bare Chromium, with none of them, proves the probes do
deliver, so every zero here can fail."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from guiforge.envs import Action, EnvSpec, TaskSpec
from guiforge.envs.web import WebEnv
from guiforge.envs.web.browser import CHROMIUM, CHROMIUM_ARGS, launch
from guiforge.envs.web.netns import available
from guiforge.envs.web.routing import APP_ORIGIN
from guiforge.testing.leaks import PROBE, Listeners, non_loopback_address

needs_netns = pytest.mark.skipif(not available(), reason="the browser's own network namespace needs root and bwrap")

@pytest.fixture
def listeners():
    hosts = ["127.0.0.2", "127.0.0.1"] + ([a] if (a := non_loopback_address()) else [])
    lst = Listeners(hosts)
    yield lst
    lst.close()


def _probe(page, listeners: Listeners) -> dict:
    return page.evaluate(PROBE, [listeners.targets("udp"), listeners.targets("tcp")])


def _on_own_thread(fn):
    """Playwright's sync API wants a thread of its own per instance."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn).result(timeout=300)


def test_bare_chromium_delivers_every_probe(listeners):
    """Control: with no namespace, flags, routes or page script the probes arrive."""

    def bare() -> None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.set_content("<html><body></body></html>")
            _probe(page, listeners)
            browser.close()

    _on_own_thread(bare)
    received = listeners.drained()
    assert {kind for kind, _ in received} == {"udp", "tcp"}
    assert {host for _, host in received} == set(listeners.udp)


def test_web_env_sends_nothing_off_its_loopback(listeners):
    def episode() -> dict:
        env = WebEnv(EnvSpec(domain="web"))
        env.start()
        try:
            env.s.page.goto(APP_ORIGIN + "/", wait_until="load")
            seen = _probe(env.s.page, listeners)
            frame = env.s.page.evaluate("""() => { const f = document.createElement('iframe');
                document.body.appendChild(f); return typeof f.contentWindow.RTCPeerConnection; }""")
            return {**seen, "iframe_rtc": frame}
        finally:
            env.close()

    seen = _on_own_thread(episode)
    assert seen["rtc"] == "undefined" and seen["iframe_rtc"] == "undefined" and seen["transport"] == "undefined"
    assert listeners.drained() == []


@needs_netns
def test_the_namespace_alone_holds(listeners):
    """No WebRTC flags, no page script, no routes (a fresh context): only the namespace."""

    def episode() -> tuple[dict, list[str], set[str]]:
        args = tuple(a for a in CHROMIUM_ARGS if "webrtc" not in a)
        session = launch(lambda pw: {}, args=args)
        try:
            page = session.browser.new_context().new_page()
            page.set_content("<html><body></body></html>")
            seen = _probe(page, listeners)
            pid = session.pids[0]
            interfaces = [line.split(":")[0].strip() for line in Path(f"/proc/{pid}/net/dev").read_text().splitlines()[2:]]
            namespaces = {os.readlink(f"/proc/{p}/ns/net") for p in _family(pid)}
            return seen, interfaces, namespaces
        finally:
            session.close()

    seen, interfaces, namespaces = _on_own_thread(episode)
    assert seen["rtc"] == "function"  # the API was there and used
    assert interfaces == ["lo"]
    assert len(namespaces) == 1 and os.readlink("/proc/self/ns/net") not in namespaces  # renderers too
    assert listeners.drained() == []


def _family(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in os.listdir(f"/proc/{p}/task"):
            try:
                todo += [int(c) for c in Path(f"/proc/{p}/task/{task}/children").read_text().split()]
            except OSError:
                continue
    return out


def test_the_flags_alone_stop_webrtc(listeners):
    """The WebRTC flags with no namespace (what a non-root run keeps): no UDP leaves."""

    def flagged() -> str:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
            page = browser.new_page()
            page.set_content("<html><body></body></html>")
            seen = page.evaluate(PROBE, [listeners.targets("udp"), []])
            browser.close()
            return seen["rtc"]

    assert _on_own_thread(flagged) == "function"
    assert listeners.drained() == []


def test_chromium_gets_none_of_the_callers_secrets(monkeypatch):
    secret = f"sk-test-{os.getpid()}-{time.monotonic_ns()}"
    monkeypatch.setenv("OPENAI_API_KEY", secret)

    def environ() -> str:
        env = WebEnv(EnvSpec(domain="web"))
        env.start()
        try:
            return "\n".join(Path(f"/proc/{p}/environ").read_bytes().decode(errors="replace") for p in _family(env.s.pids[0]))
        finally:
            env.close()

    text = _on_own_thread(environ)
    assert "PATH=" in text and secret not in text


def test_goto_a_foreign_origin_is_an_action_error():
    def episode() -> list[str | None]:
        env = WebEnv(EnvSpec(domain="web"))
        env.start()
        try:
            env.reset(TaskSpec(task_id="goto", domain="web", apps=["mail"], instruction="look"))
            targets = ("//evil.example/x", "///x", "/\\\\evil/x", "file:///etc/passwd", "javascript:alert(1)")
            errors = [env.step(Action(type="goto", text=t)).error for t in targets]
            return [*errors, env.step(Action(type="goto", text="/mail")).error]
        finally:
            env.close()

    *refused, fine = _on_own_thread(episode)
    assert refused[0] is not None and "cannot open '//evil.example/x'" in refused[0]
    assert all(error is not None for error in refused[3:]), refused
    assert fine is None
