"""The recording format (``guiforge-replay/1``) and its conversion from a HAR.

A recording is one JSON document (gzip-compressed when the file name ends in ``.gz``; the
loader sniffs the gzip magic, so a lake blob may be either)::

    {
      "format": "guiforge-replay/1",
      "start_url": "http://127.0.0.1:8000/",     # where an episode starts
      "viewport": [1280, 720],                   # what it was recorded at
      "normalizer": {...},                       # NormalizerConfig: how keys were made
      "replaced": {"cookie": 2, "nonce": 1, "token": 3, "time": 5},   # counts, never values
      "exchanges": [
        {"key": "GET http://127.0.0.1:8000/api/items",   # Normalizer.request_key
         "method": "GET", "url": "http://127.0.0.1:8000/api/items?_=1704067200000",
         "request": null | {"type": "application/x-www-form-urlencoded", "text": "q=hi&csrf=gf-token-1"},
         "status": 200,                                   # 0 = the request failed when recorded
         "headers": [["content-type", "application/json"], ["set-cookie", "sid=gf-cookie-1; Path=/"]],
         "body": {"text": "..."} | {"base64": "..."}},
        ...
      ]
    }

Every secret is already a placeholder and every timestamp near the recording is the
normaliser's ``clock``: a recording holds no session cookie, CSRF token, nonce or wall-clock
time of the session it came from. Exchanges keep the order the browser sent them; the same
key recorded twice is answered in that order on replay (then the last answer repeats).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guiforge.envs.replay.normalize import Normalizer, NormalizerConfig, is_text

FORMAT = "guiforge-replay/1"


@dataclass
class Exchange:
    key: str
    method: str
    url: str
    status: int
    headers: list[list[str]]
    body: bytes
    request: dict[str, str] | None = None

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k == name), None)

    def to_json(self) -> dict[str, Any]:
        ctype = self.header("content-type")
        if is_text(ctype):
            try:
                body: dict[str, str] = {"text": self.body.decode()}
            except UnicodeDecodeError:
                body = {"base64": base64.b64encode(self.body).decode()}
        else:
            body = {"base64": base64.b64encode(self.body).decode()}
        return {"key": self.key, "method": self.method, "url": self.url, "request": self.request,
                "status": self.status, "headers": self.headers, "body": body}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Exchange:
        b = d.get("body") or {}
        body = b["text"].encode() if "text" in b else base64.b64decode(b.get("base64", ""))
        return cls(key=d["key"], method=d["method"], url=d["url"], status=int(d["status"]),
                   headers=[list(h) for h in d["headers"]], body=body, request=d.get("request"))


@dataclass
class Recording:
    start_url: str
    exchanges: list[Exchange]
    normalizer: NormalizerConfig = field(default_factory=NormalizerConfig)
    viewport: tuple[int, int] = (1280, 720)
    replaced: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "start_url": self.start_url, "viewport": list(self.viewport),
                "normalizer": self.normalizer.model_dump(mode="json"), "replaced": self.replaced,
                "exchanges": [e.to_json() for e in self.exchanges]}

    def to_bytes(self, compress: bool = False) -> bytes:
        raw = json.dumps(self.to_json(), ensure_ascii=False, indent=1).encode()
        return gzip.compress(raw, mtime=0) if compress else raw  # mtime=0: same content, same bytes

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_bytes(self.to_bytes(compress=path.suffix == ".gz"))
        return path

    @classmethod
    def from_bytes(cls, data: bytes, origin: str = "recording") -> Recording:
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        try:
            d = json.loads(data)
        except ValueError as exc:
            raise ValueError(f"{origin}: not a guiforge replay recording (invalid JSON: {exc})") from None
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            found = d.get("format") if isinstance(d, dict) else type(d).__name__
            raise ValueError(f"{origin}: format is {found!r}, expected {FORMAT!r}; record it with python -m guiforge.envs.replay record")
        return cls(start_url=d["start_url"], exchanges=[Exchange.from_json(e) for e in d["exchanges"]],
                   normalizer=NormalizerConfig.model_validate(d.get("normalizer") or {}),
                   viewport=tuple(d.get("viewport") or (1280, 720)), replaced=d.get("replaced") or {})

    @classmethod
    def load(cls, path: str | Path) -> Recording:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"replay recording {path} does not exist; record one with python -m guiforge.envs.replay record URL --out {path}")
        return cls.from_bytes(path.read_bytes(), origin=str(path))


def _har_body(content: dict[str, Any]) -> bytes:
    text = content.get("text")
    if text is None:
        return b""
    return base64.b64decode(text) if content.get("encoding") == "base64" else text.encode()


def from_har(har: dict[str, Any], start_url: str, config: NormalizerConfig | None = None,
             window: tuple[float, float] | None = None, viewport: tuple[int, int] = (1280, 720)) -> Recording:
    """A Playwright HAR (content embedded) -> a normalised recording. ``window`` is the
    recording's (start, end) in epoch seconds: timestamps near it become the clock."""
    norm = Normalizer(config)
    raw = []
    for entry in har["log"]["entries"]:
        req, resp = entry["request"], entry["response"]
        post = req.get("postData") or {}
        headers = [(h["name"], h["value"]) for h in resp.get("headers", [])]
        ctype = next((v for k, v in headers if k.lower() == "content-type"), None) or resp.get("content", {}).get("mimeType")
        raw.append((req["method"], req["url"], post, int(resp.get("status") or 0), headers, ctype, _har_body(resp.get("content", {}))))

    # Discover every token first, so each is replaced everywhere it occurs.
    for _method, url, post, _status, headers, ctype, body in raw:
        norm.discover_url(url)
        if post.get("text"):
            norm.discover_form(post["text"]) if "urlencoded" in (post.get("mimeType") or "") else norm.discover_text(post["text"])
        for name, value in headers:
            norm.discover_header(name, value)
        if is_text(ctype):
            with contextlib.suppress(UnicodeDecodeError):
                norm.discover_text(body.decode())

    exchanges = []
    for method, url, post, status, headers, ctype, body in raw:
        url = norm.scrub(url, window)
        request = None
        if post.get("text") is not None:
            request = {"type": post.get("mimeType") or "", "text": norm.scrub(post["text"], window)}
        if is_text(ctype):
            with contextlib.suppress(UnicodeDecodeError):
                body = norm.scrub(body.decode(), window).encode()
        key = norm.request_key(method, url, request["text"] if request else None, request["type"] if request else None)
        exchanges.append(Exchange(key=key, method=method, url=url, status=max(status, 0),
                                  headers=norm.scrub_headers(headers, window), body=body, request=request))
    return Recording(start_url=norm.scrub(start_url, window), exchanges=exchanges, normalizer=norm.config,
                     viewport=viewport, replaced=norm.summary())


def load_recording(ref: str | dict[str, Any]) -> tuple[str, Recording]:
    """``setup["replay"]`` -> (a name for caches and logs, the recording). A path, or a lake
    blob: ``{"sha256": "<hex>", "lake": "<lake uri>"}`` (``lake`` defaults to data/lake)."""
    if isinstance(ref, str):
        return ref, Recording.load(ref)
    if isinstance(ref, dict) and "path" in ref:
        return str(ref["path"]), Recording.load(ref["path"])
    if isinstance(ref, dict) and "sha256" in ref:
        sha, lake = str(ref["sha256"]), str(ref.get("lake") or "data/lake")
        return f"{lake}#blobs/{sha}", Recording.from_bytes(read_blob(lake, sha), origin=f"blob {sha} in {lake}")
    raise ValueError(f"setup.replay must be a path or {{'sha256': ..., 'lake': ...}}, not {ref!r}")


def read_blob(lake_uri: str, sha256: str) -> bytes:
    """One blob's bytes from a lake's ``blobs`` table, reading only the shard that holds it."""
    # heavy: numpy, imported when this runs
    import pyarrow.compute as pc

    # heavy: numpy, imported when this runs
    from guiforge.lake.store import Lake

    lake = Lake(lake_uri)
    for shard in lake.shard_files("blobs"):
        table = lake.read_shard(shard.path, columns=["sha256"])
        hits = pc.equal(table.column("sha256"), sha256)
        if pc.any(hits).as_py():
            data = lake.read_shard(shard.path, columns=["sha256", "data"]).filter(hits)
            return data.column("data")[0].as_py()
    raise FileNotFoundError(f"no blob {sha256} in {lake_uri}/blobs; store the recording with ShardContent.add_blob first")
