"""The normaliser without a browser: what it replaces, what it leaves alone, how it keys."""

from __future__ import annotations

import time

from guiforge.envs.replay import Normalizer, NormalizerConfig


def test_request_keys_ignore_cache_busters_tokens_and_times():
    n = Normalizer()
    a = n.request_key("GET", "http://Shop.test/api?_=1716000000000&page=2&csrf=abc123def456", None, None)
    b = n.request_key("get", "http://shop.test/api?page=2&csrf=ZZZ999YYY888&_=1704067200000", None, None)
    assert a == b == "GET http://shop.test/api?csrf=%2A&page=2"
    assert n.request_key("GET", "http://shop.test/api?page=3", None, None) != a
    form = "application/x-www-form-urlencoded"
    one = n.request_key("POST", "http://shop.test/order", "item=Teapot&csrf_token=aa11bb22cc33", form)
    two = n.request_key("POST", "http://shop.test/order", "csrf_token=ff99ee88dd77&item=Teapot", form)
    assert one == two and one != n.request_key("POST", "http://shop.test/order", "item=Kettle&csrf_token=x", form)
    js = "application/json"
    assert n.request_key("POST", "http://s/a", '{"q": "x", "ts": 1716000000, "nonce": "r4nd0m99"}', js) == \
        n.request_key("POST", "http://s/a", '{"nonce": "0th3r111", "q": "x", "ts": 1704067200}', js)


def test_scrub_replaces_tokens_everywhere_and_only_recent_times():
    n = Normalizer(NormalizerConfig())
    now = time.time()
    recent_ms = int(now * 1000)
    n.discover_header("Set-Cookie", "sid=9f8e7d6c5b4a39281706; Path=/; HttpOnly")
    n.discover_text('<form><input type="hidden" value="tok+en/12345678==" name="authenticity_token"></form>')
    n.discover_text('<script nonce="n0nc3V4lu3x">window.csrfToken = "c5rf0000abcd1";</script>')
    n.discover_text('<input name="theme" value="darkmode"><input name="csrf" value="default">')  # not secrets
    assert set(n.tokens.values()) == {"gf-cookie-1", "gf-token-1", "gf-token-2", "gf-nonce-1"}
    text = (f"sid=9f8e7d6c5b4a39281706 q=tok%2Ben%2F12345678%3D%3D nonce=n0nc3V4lu3x t={recent_ms} "
            "old=2019-03-04T05:06:07Z theme=darkmode csrf=default c5rf0000abcd1")
    out = n.scrub(text, window=(now - 5, now))
    assert out == ("sid=gf-cookie-1 q=gf-token-1 nonce=gf-nonce-1 t=1704067200000 "
                   "old=2019-03-04T05:06:07Z theme=darkmode csrf=default gf-token-2")
    iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
    assert n.scrub(f"at {iso}.123Z", window=(now, now)) == "at 2024-01-01T00:00:00.000Z"
    headers = n.scrub_headers([("Date", "x"), ("ETag", "y"), ("Content-Length", "9"), ("Set-Cookie", "sid=9f8e7d6c5b4a39281706")], None)
    assert headers == [["set-cookie", "sid=gf-cookie-1"]]
