"""A replayed page (recorded third-party JS runs again) cannot send anything off the
browser's loopback either: no peer-to-peer API in its pages, and the UDP and TCP listeners
on 127.0.0.2, the host's 127.0.0.1 and a non-loopback address receive nothing."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from guiforge.envs import EnvSpec, TaskSpec
from guiforge.envs.replay import ReplayEnv
from guiforge.testing.leaks import PROBE, Listeners, non_loopback_address


def test_a_replayed_page_sends_nothing_off_its_loopback(recorded):
    path, _, _ = recorded
    listeners = Listeners(["127.0.0.2", "127.0.0.1"] + ([a] if (a := non_loopback_address()) else []))

    def episode() -> dict:
        env = ReplayEnv(EnvSpec(domain="web"))
        env.start()
        try:
            env.reset(TaskSpec(task_id="replay-leak", domain="web", instruction="look", setup={"replay": str(path)}))
            return env.s.page.evaluate(PROBE, [listeners.targets("udp"), listeners.targets("tcp")])
        finally:
            env.close()

    try:
        with ThreadPoolExecutor(1) as pool:  # Playwright's sync API wants a thread of its own
            seen = pool.submit(episode).result(timeout=300)
        assert seen == {"rtc": "undefined", "transport": "undefined"}
        assert listeners.drained() == []
    finally:
        listeners.close()
