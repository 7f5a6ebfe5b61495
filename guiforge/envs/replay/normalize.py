"""Volatile tokens in recorded HTTP traffic: find them, replace them, and match requests
without them.

Two jobs, both configured by :class:`NormalizerConfig`:

* **Scrubbing** (at record time): every session cookie, CSRF token, nonce and other secret
  found in the traffic is replaced *everywhere* (URLs, bodies, headers) by a stable
  placeholder (``gf-cookie-1``, ``gf-token-2``, ``gf-nonce-1``), so a page that echoes a token
  back (a form field, a header, a cookie) echoes the placeholder and still matches. Timestamps
  within ``time_window_s`` of the recording become the fixed ``clock`` instant, which is also
  the replay's ``Date.now()``. Headers that only describe one moment (``Date``, ``ETag``, ...)
  are dropped.
* **Matching** (at record and replay time): :meth:`Normalizer.request_key` reduces a request
  to ``METHOD url [body-hash]`` with cache-busting parameters dropped, token-named values
  masked and anything that looks like a timestamp masked, so the replayed page's requests
  find their recorded answers.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit

from pydantic import BaseModel, ConfigDict, Field

TEXT_TYPES = re.compile(r"^(text/|application/(x-www-form-urlencoded|(.+\+)?json|(x-)?(java|ecma)script|(.+\+)?xml))", re.I)

# Broad patterns for request keys: anything shaped like a timestamp, whatever its value.
_ANY_TIME = re.compile(r"(?<![\w.])1\d{9}(?:\d{3})?(?:\.\d+)?(?![\w])|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")

_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})([T ])(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})?")
_EPOCH = re.compile(r"(?<![\w.])(1\d{9})(\d{3})?(\.\d+)?(?![\w])")
_HTTP_DATE = re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT")

_TAG = re.compile(r"<(?:input|meta)\b[^>]*>", re.I)
_ATTR = re.compile(r"""([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_NONCE_ATTR = re.compile(r"""\bnonce\s*=\s*["']?([^"'\s>]+)""", re.I)
_CSP_NONCE = re.compile(r"'nonce-([^']+)'")
# JS / JSON assignments such as  csrfToken: "..."  or  window.nonce = '...'
_ASSIGN = re.compile(r"""["']?([A-Za-z_$][\w$-]*)["']?\s*[:=]\s*["']([^"'\s<>]{6,})["']""")
_BASE64ISH = re.compile(r"[A-Za-z0-9+/=_.~-]+")


class NormalizerConfig(BaseModel):
    """What counts as volatile. Stored in the recording, so a replay matches requests
    exactly the way its recording was normalised."""

    model_config = ConfigDict(extra="forbid")

    volatile_params: list[str] = Field(default_factory=lambda: [
        "_", "_t", "t", "ts", "timestamp", "cb", "cachebust", "cache_bust", "cachebuster", "nocache",
        "rand", "random", "_dc", "_r"])
    # Field, parameter, cookie, header and JSON-key names whose values are secrets or nonces.
    token_names: str = r"csrf|xsrf|nonce|token|session|sessid|^sid$|authenticity|verification"
    drop_headers: list[str] = Field(default_factory=lambda: [
        "date", "expires", "last-modified", "etag", "age", "x-request-id", "x-runtime", "server-timing",
        "cf-ray", "report-to", "nel", "alt-svc", "x-amz-request-id", "x-amz-cf-id", "via", "x-served-by",
        "x-cache", "x-timer"])
    cookie_values: bool = True  # every Set-Cookie value is a token (session ids, trackers)
    # Extra regexes whose group 1 is a volatile value in a text body, for site-specific tokens.
    token_patterns: list[str] = Field(default_factory=list)
    min_token_length: int = 6  # shorter values ("1", "dark") are left alone
    time_window_s: float = 86400.0  # timestamps this close to the recording are "now"
    clock: datetime = datetime(2024, 1, 1, tzinfo=UTC)  # what "now" becomes; the replay's Date.now()


class Normalizer:
    def __init__(self, config: NormalizerConfig | None = None):
        self.config = config or NormalizerConfig()
        self._token_name = re.compile(self.config.token_names, re.I)
        self._volatile = {p.lower() for p in self.config.volatile_params}
        self._drop = {h.lower() for h in self.config.drop_headers}
        self._extra = [re.compile(p) for p in self.config.token_patterns]
        self.tokens: dict[str, str] = {}  # secret value -> placeholder
        self._counts: dict[str, int] = {}
        self.times_replaced = 0

    # -- discovery -----------------------------------------------------------------------
    def is_token_name(self, name: str) -> bool:
        return bool(self._token_name.search(name))

    def looks_random(self, value: str) -> bool:
        """Secrets are high-entropy strings. Replacing a plain word ("default", "dark") that
        merely sits in a token-named field everywhere in the recording would break pages."""
        if len(value) < self.config.min_token_length or value.startswith("gf-") or _ANY_TIME.fullmatch(value):
            return False
        digits = sum(c.isdigit() for c in value)
        letters = sum(c.isalpha() for c in value)
        return (digits >= 2 and letters >= 2) or (len(value) >= 16 and bool(_BASE64ISH.fullmatch(value)))

    def add_token(self, value: str, kind: str) -> None:
        if value in self.tokens or not self.looks_random(value):
            return
        self._counts[kind] = self._counts.get(kind, 0) + 1
        self.tokens[value] = f"gf-{kind}-{self._counts[kind]}"

    def discover_cookie(self, set_cookie: str) -> None:
        name, _, rest = set_cookie.partition("=")
        value = rest.split(";", 1)[0].strip().strip('"')
        if self.config.cookie_values or self.is_token_name(name):
            self.add_token(value, "cookie")

    def discover_header(self, name: str, value: str) -> None:
        lname = name.lower()
        if lname == "set-cookie":
            for line in value.split("\n"):
                self.discover_cookie(line)
        elif lname.startswith("content-security-policy"):
            for m in _CSP_NONCE.finditer(value):
                self.add_token(m.group(1), "nonce")
        elif self.is_token_name(lname):
            self.add_token(value.strip(), "token")

    def discover_url(self, url: str) -> None:
        for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
            if self.is_token_name(name):
                self.add_token(value, "token")

    def discover_form(self, body: str) -> None:
        for name, value in parse_qsl(body, keep_blank_values=True):
            if self.is_token_name(name):
                self.add_token(value, "token")

    def discover_text(self, text: str) -> None:
        """HTML, JS and JSON bodies: token-named inputs and metas, nonces, assignments."""
        for tag in _TAG.finditer(text):
            attrs = {m.group(1).lower(): next(g for g in m.groups()[1:] if g is not None) for m in _ATTR.finditer(tag.group())}
            name = attrs.get("name") or attrs.get("id") or ""
            value = attrs.get("value", attrs.get("content"))
            if value and self.is_token_name(name):
                self.add_token(value, "token")
        for m in _NONCE_ATTR.finditer(text):
            self.add_token(m.group(1), "nonce")
        for m in _ASSIGN.finditer(text):
            if self.is_token_name(m.group(1)):
                self.add_token(m.group(2), "token")
        for rx in self._extra:
            for m in rx.finditer(text):
                self.add_token(m.group(1), "token")

    # -- scrubbing -----------------------------------------------------------------------
    def scrub(self, text: str, window: tuple[float, float] | None) -> str:
        """Replace every known token (raw and URL-encoded) and, when the recording's time
        window is given, every timestamp inside it by the clock."""
        if self.tokens:
            text = self._token_rx().sub(lambda m: self._token_by_form[m.group()], text)
        if window is not None:
            text = self._scrub_times(text, window)
        return text

    def _token_rx(self) -> re.Pattern[str]:
        if getattr(self, "_rx_for", None) != len(self.tokens):
            forms: dict[str, str] = {}
            for value, placeholder in self.tokens.items():
                for form in {value, quote(value, safe=""), quote_plus(value)}:
                    forms.setdefault(form, placeholder)
            self._token_by_form = forms
            self._rx = re.compile("|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True)))
            self._rx_for = len(self.tokens)
        return self._rx

    def _scrub_times(self, text: str, window: tuple[float, float]) -> str:
        lo, hi = window[0] - self.config.time_window_s, window[1] + self.config.time_window_s
        clock = self.config.clock.astimezone(UTC)

        def iso(m: re.Match[str]) -> str:
            y, mo, d, sep, h, mi, s, frac, tz = m.groups()
            try:
                when = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), tzinfo=UTC)
            except ValueError:
                return m.group()
            if tz and tz != "Z":
                sign = 1 if tz[0] == "+" else -1
                hh, mm = int(tz[1:3]), int(tz[-2:])
                when -= sign * timedelta(hours=hh, minutes=mm)
            if not lo <= when.timestamp() <= hi:
                return m.group()
            self.times_replaced += 1
            out = clock.strftime(f"%Y-%m-%d{sep}%H:%M:%S") + ("." + "0" * (len(frac) - 1) if frac else "")
            return out + ("Z" if tz == "Z" else ("+00:00" if tz and ":" in tz else ("+0000" if tz else "")))

        def epoch(m: re.Match[str]) -> str:
            seconds, millis, frac = m.groups()
            if not lo <= int(seconds) <= hi:
                return m.group()
            self.times_replaced += 1
            out = str(int(clock.timestamp()))
            return out + ("000" if millis else "") + ("." + "0" * (len(frac) - 1) if frac else "")

        def http_date(m: re.Match[str]) -> str:
            when = datetime.strptime(m.group(), "%a, %d %b %Y %H:%M:%S GMT").replace(tzinfo=UTC)
            if not lo <= when.timestamp() <= hi:
                return m.group()
            self.times_replaced += 1
            return format_datetime(clock, usegmt=True)

        return _HTTP_DATE.sub(http_date, _EPOCH.sub(epoch, _ISO.sub(iso, text)))

    def scrub_headers(self, headers: Iterable[tuple[str, str]], window: tuple[float, float] | None) -> list[list[str]]:
        """Drop moment-specific and transport headers; scrub the rest."""
        out = []
        for name, value in headers:
            lname = name.lower()
            if lname in self._drop or lname in ("content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"):
                continue
            out.append([lname, self.scrub(value, window)])
        return out

    def summary(self) -> dict[str, int]:
        return {**self._counts, "time": self.times_replaced}

    # -- matching ------------------------------------------------------------------------
    def request_key(self, method: str, url: str, body: bytes | str | None, content_type: str | None) -> str:
        parts = urlsplit(url)
        query = self._key_pairs(parse_qsl(parts.query, keep_blank_values=True))
        key = f"{method.upper()} {parts.scheme.lower()}://{parts.netloc.lower()}{parts.path or '/'}"
        if query:
            key += "?" + urlencode(query)
        normalized = self._key_body(body, content_type or "")
        if normalized:
            key += " body:" + hashlib.sha256(normalized).hexdigest()[:16]
        return key

    def _key_value(self, name: str, value: Any) -> Any:
        if self.is_token_name(name):
            return "*"
        if isinstance(value, str):
            return _ANY_TIME.sub("<time>", value)
        if isinstance(value, int | float) and not isinstance(value, bool) and _ANY_TIME.fullmatch(str(value)):
            return "<time>"
        return value

    def _key_pairs(self, pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return sorted((k, self._key_value(k, v)) for k, v in pairs if k.lower() not in self._volatile)

    def _key_json(self, value: Any, name: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self._key_json(v, k) for k, v in value.items() if k.lower() not in self._volatile}
        if isinstance(value, list):
            return [self._key_json(v, name) for v in value]
        return self._key_value(name, value) if name else self._key_value("", value)

    def _key_body(self, body: bytes | str | None, content_type: str) -> bytes:
        if not body:
            return b""
        raw = body.encode() if isinstance(body, str) else body
        kind = content_type.split(";")[0].strip().lower()
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            return raw
        if kind == "application/x-www-form-urlencoded":
            return urlencode(self._key_pairs(parse_qsl(text, keep_blank_values=True))).encode()
        if kind.endswith("json"):
            try:
                return json.dumps(self._key_json(json.loads(text)), sort_keys=True).encode()
            except ValueError:
                pass
        return _ANY_TIME.sub("<time>", text).encode()


def is_text(content_type: str | None) -> bool:
    return bool(content_type) and bool(TEXT_TYPES.match(content_type.strip()))
