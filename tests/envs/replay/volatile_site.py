"""A small real site on 127.0.0.1 that changes on every request, the way real sites do: a
random session cookie, a per-response CSP nonce, a per-request CSRF token (checked on
submit), server timestamps in the HTML and in a JSON API fetched with ``?_=<epoch ms>``, a
random order id behind a 303 redirect, a script behind a 302. It remembers every volatile value it issued, so a
test can prove none of them survived into a recording."""

from __future__ import annotations

import json
import secrets
import threading
import time
import uuid
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

ITEMS = ["Teapot", "Kettle", "Mug", "Saucer"]


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


HOME = """<!doctype html><html><head><meta charset="utf-8"><title>Volatile shop</title>
<meta name="csrf-token" content="{csrf}">
<style>body {{ font: 16px sans-serif; margin: 24px; }} li {{ margin: 2px 0; }}</style></head>
<body><h1>Volatile shop</h1>
<p id="generated">Page generated at {iso}</p>
<p id="visit"></p><p id="clock"></p><p id="lucky"></p>
<ul id="items"></ul><p id="stock"></p><p id="build"></p>
<form method="post" action="/order">
  <input type="hidden" name="csrf_token" value="{csrf}">
  <label>Item <input id="item" name="item" autocomplete="off"></label>
  <button id="order" type="submit">Order</button>
</form>
<script nonce="{nonce}">
  const kept = [document.cookie.includes("visited=1") && "cookie", localStorage.getItem("visited") && "localStorage",
    sessionStorage.getItem("visited") && "sessionStorage", window.name === "visited" && "window.name"].filter(Boolean);
  document.getElementById("visit").textContent = kept.length ? "Welcome back (" + kept.join(", ") + ")" : "First visit";
  document.cookie = "visited=1; path=/";
  localStorage.setItem("visited", "1");
  sessionStorage.setItem("visited", "1");
  window.name = "visited";
  document.getElementById("clock").textContent = "Browser time " + new Date().toISOString();
  document.getElementById("lucky").textContent = "Lucky number " + Math.floor(Math.random() * 1e6);
  fetch("/api/items?_=" + Date.now()).then((r) => r.json()).then((data) => {{
    document.getElementById("items").innerHTML = data.items.map((i) => "<li>" + i + "</li>").join("");
    document.getElementById("stock").textContent = "Stock as of " + new Date(data.server_time).toISOString();
  }});
</script>
<script nonce="{nonce}" src="/assets/app.js"></script></body></html>"""

THANKS = """<!doctype html><html><head><meta charset="utf-8"><title>Thanks</title></head>
<body><h1>Thanks!</h1><p id="summary">Order {order} for {item} placed at {iso}</p>
<a id="home" href="/">Back to the shop</a></body></html>"""


class VolatileSite:
    def __init__(self) -> None:
        self.issued: dict[str, list[str]] = {"session": [], "nonce": [], "csrf": [], "time": [], "request_id": [], "order": []}
        self.orders: list[dict[str, str]] = []
        self.hits = 0
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                site.hits += 1
                url = urlsplit(self.path)
                if url.path == "/":
                    site._home(self)
                elif url.path == "/api/items":
                    now_ms = int(time.time() * 1000)
                    rid = str(uuid.uuid4())
                    site.issued["time"].append(str(now_ms))
                    site.issued["request_id"].append(rid)
                    site._send(self, 200, json.dumps({"items": ITEMS, "server_time": now_ms, "request_id": rid}),
                               "application/json")
                elif url.path == "/assets/app.js":  # a subresource behind a redirect
                    self.send_response(302)
                    self.send_header("Location", "/assets/app-7f3a9c.js")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif url.path == "/assets/app-7f3a9c.js":
                    site._send(self, 200, 'document.getElementById("build").textContent = "Build 7f3a9c loaded";',
                               "text/javascript")
                elif url.path == "/thanks":
                    order = parse_qs(url.query).get("order", ["?"])[0]
                    item = next((o["item"] for o in site.orders if o["order"] == order), "?")
                    iso = _now_iso()
                    site.issued["time"].append(iso)
                    site._send(self, 200, THANKS.format(order=order, item=item, iso=iso), "text/html; charset=utf-8")
                else:
                    site._send(self, 404, "not found", "text/plain")

            def do_POST(self) -> None:
                site.hits += 1
                form = parse_qs(self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode())
                token = form.get("csrf_token", [""])[0]
                if urlsplit(self.path).path != "/order" or token not in site.issued["csrf"]:
                    site._send(self, 403, "bad csrf token", "text/plain")
                    return
                order = secrets.token_hex(6)
                site.issued["order"].append(order)
                site.orders.append({"order": order, "item": form.get("item", [""])[0]})
                self.send_response(303)
                self.send_header("Location", f"/thanks?order={order}")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _home(self, handler: BaseHTTPRequestHandler) -> None:
        session, nonce, csrf, iso = secrets.token_hex(16), secrets.token_urlsafe(12), secrets.token_hex(20), _now_iso()
        self.issued["session"].append(session)
        self.issued["nonce"].append(nonce)
        self.issued["csrf"].append(csrf)
        self.issued["time"].append(iso)
        body = HOME.format(csrf=csrf, nonce=nonce, iso=iso)
        self._send(handler, 200, body, "text/html; charset=utf-8", [
            ("Set-Cookie", f"session={session}; Path=/; HttpOnly"),
            ("Content-Security-Policy", f"script-src 'nonce-{nonce}'"),
            ("Cache-Control", "no-store"),
        ])

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: str, ctype: str,
              headers: list[tuple[str, str]] = ()) -> None:
        data = body.encode()
        handler.send_response(status)  # adds Date and Server
        handler.send_header("Content-Type", ctype)
        handler.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    def start(self) -> VolatileSite:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)
