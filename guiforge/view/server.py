"""``guiforge view``: a local, read-only web app over the lake, served by the standard
library's threading HTTP server on loopback (127.0.0.1 unless told otherwise). Routes:

    /                                  the runs, and a form to compare two
    /run/<run_id>                      provenance, funnel, stages and timeline, time and cost,
                                       success by skill, judge audit, exclusions by pattern
    /rows/<table>?filters&sort=&desc=  tasks, trajectories, judgments, exclusions
    /trajectory/<run_id>/<id>          the trajectory player
    /image/<sha256>                    a screenshot from the images table
    /compare?a=<run>&b=<run>           two runs side by side
"""

from __future__ import annotations

import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlsplit

from guiforge.lake.store import Lake
from guiforge.report.provenance import header_items, run_provenance
from guiforge.view.data import ViewData
from guiforge.view.pages import TABLES, render_compare, render_index, render_rows, render_run
from guiforge.view.player import render_player
from guiforge.view.timeline import timeline_svg

log = logging.getLogger(__name__)
DEFAULT_PORT = 8765
MEDIA = {"png": "image/png", "jpeg": "image/jpeg", "jpg": "image/jpeg", "webp": "image/webp"}


class NotFound(Exception):
    pass


class Viewer:
    """The app: a path and query in, (status, content type, body) out."""

    def __init__(self, lake: Lake):
        self.lake = lake
        self.data = ViewData(lake)

    def handle(self, path: str, query: dict[str, str]) -> tuple[int, str, bytes]:
        parts = [unquote(p) for p in path.strip("/").split("/") if p]
        try:
            if not parts:
                return self._html(render_index(self.lake.uri, self.data.runs()))
            head, rest = parts[0], parts[1:]
            if head == "run" and len(rest) == 1:
                overview = self.data.run_overview(rest[0])
                return self._html(render_run(self.lake.uri, overview, timeline_svg(overview["stages"],
                                                                                    overview["shards"])))
            if head == "rows" and len(rest) == 1 and rest[0] in TABLES:
                return self._rows(rest[0], query)
            if head == "trajectory" and len(rest) == 2:
                found = self.data.trajectory(rest[0], rest[1])
                if found is None:
                    raise NotFound(f"no trajectory {rest[1]} in run {rest[0]}")
                return self._html(render_player(self.lake.uri, found, self._header(rest[0])))
            if head == "image" and len(rest) == 1:
                image = self.data.image(rest[0])
                if image is None:
                    raise NotFound(f"no image {rest[0]}")
                return 200, MEDIA.get(image[1].lower(), "application/octet-stream"), image[0]
            if head == "compare" and query.get("a") and query.get("b"):
                return self._html(render_compare(self.lake.uri, self.data.compare(query["a"], query["b"])))
            if head == "refresh":
                self.data.refresh()
                return 303, "/", b""
        except NotFound as exc:
            return 404, "text/plain; charset=utf-8", f"{exc}\n".encode()
        return 404, "text/plain; charset=utf-8", f"no page {path}\n".encode()

    def _rows(self, table: str, query: dict[str, str]) -> tuple[int, str, bytes]:
        filters = {k: v for k, v in query.items() if k not in ("sort", "desc", "offset", "limit")}
        try:
            offset, limit = max(0, int(query.get("offset") or 0)), min(1000, max(1, int(query.get("limit") or 100)))
        except ValueError:
            return 400, "text/plain; charset=utf-8", b"offset and limit are numbers\n"
        page = self.data.page(table, filters, query.get("sort") or None, query.get("desc") == "1", offset, limit)
        return self._html(render_rows(self.lake.uri, page, self._header(filters.get("run"))))

    def _header(self, run: str | None) -> list | None:
        return header_items(run_provenance(self.lake, run)) if run else None

    @staticmethod
    def _html(page: str) -> tuple[int, str, bytes]:
        return 200, "text/html; charset=utf-8", page.encode()

    def close(self) -> None:
        self.data.close()


def make_server(lake: Lake, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> tuple[ThreadingHTTPServer, Viewer]:
    viewer = Viewer(lake)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt: str, *args) -> None:
            log.debug(fmt, *args)

        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            url = urlsplit(self.path)
            try:
                status, kind, body = viewer.handle(url.path, dict(parse_qsl(url.query)))
            except Exception as exc:  # a page that fails says why; the server goes on
                log.exception("guiforge view: %s", self.path)
                status, kind, body = 500, "text/plain; charset=utf-8", f"{type(exc).__name__}: {exc}\n".encode()
            self.send_response(status)
            if status == 303:
                self.send_header("location", kind)
                kind = "text/plain"
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            if kind.startswith("image/"):
                self.send_header("cache-control", "max-age=86400, immutable")  # content-addressed
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server, viewer


def serve_in_thread(lake: Lake, host: str = "127.0.0.1", port: int = 0) -> tuple[ThreadingHTTPServer, Viewer, str]:
    """Start the viewer on a thread (tests); returns the server, the app and its base URL."""
    server, viewer = make_server(lake, host, port)
    threading.Thread(target=server.serve_forever, daemon=True, name="guiforge-view").start()
    return server, viewer, f"http://{host}:{server.server_address[1]}"
