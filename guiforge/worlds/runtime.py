"""The state of building one world from a scenario: its random stream, its Faker instances,
the template context, and errors that name the scenario file, line and field."""

from __future__ import annotations

import hashlib
import random
import threading
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from typing import Any

from faker import Faker

from guiforge.errors import ConfigError
from guiforge.worlds.dsl import At, Scenario, _Each
from guiforge.worlds.model import Persona
from guiforge.worlds.places import place_context
from guiforge.worlds.render import LOCALE_KEY, TemplateError, renderer
from guiforge.worlds.seeds import LocaleInfo, locale_info
from guiforge.yamlfile import PathKey, dotted

_fakers = threading.local()


def shared_faker(locale: str) -> Faker:
    """One Faker per locale and thread: building one is slow (~50 ms), reseeding is cheap."""
    cache: dict[str, Faker] = getattr(_fakers, "cache", None) or {}
    _fakers.cache = cache
    if locale not in cache:
        try:
            fk = Faker(locale)
        except AttributeError:
            raise ValueError(f"Faker has no locale {locale!r}") from None
        _fix_hash_ordered_lists(fk)
        cache[locale] = fk
    return cache[locale]


def _fix_hash_ordered_lists(fk: Faker) -> None:
    """Faker's it_IT builds its city list from a set, so the list's order (and so the city a
    seed picks) changes with PYTHONHASHSEED. Sort such lists so a seed means one city."""
    for provider in fk.providers:
        cities = getattr(provider, "cities", None)
        if type(provider).__module__.endswith("address.it_IT") and isinstance(cities, list):
            provider.cities = sorted(cities)


def stable_hash(*parts: object) -> bytes:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()


def base_date_for(digest: bytes) -> date:
    """A 'today' in 2024-2025, so calendars and weekdays vary between worlds."""
    return date(2024, 1, 1) + timedelta(days=int.from_bytes(digest[:4], "big") % 731)


def me_context(p: Persona) -> dict[str, Any]:
    names = p.name.split()
    return {**p.model_dump(), "id": "me", "first_name": names[0], "last_name": names[-1]}


def workday(d: date) -> date:
    return d + timedelta(days=(7 - d.weekday()) % 7) if d.weekday() >= 5 else d


class Run:
    def __init__(self, persona: Persona, scenario: Scenario, seed: int):
        self.persona, self.scenario, self.seed = persona, scenario, seed
        digest = stable_hash("guiforge-world", persona.persona_id, scenario.id, seed)
        self.world_id = "wld_" + digest.hex()[:10]
        self.rng = random.Random(int.from_bytes(digest[8:16], "big"))
        self.base_date = base_date_for(digest[16:])
        self.loc: LocaleInfo = locale_info(persona.locale)
        self.r = renderer()
        self._seeded: set[str] = set()
        self.ctx: dict[str, Any] = self.r.context(
            {
                LOCALE_KEY: self.loc,
                "me": me_context(persona),
                "base_date": self.base_date,
                "today": self.base_date,
                "currency": self.loc.currency,
                "people": {},
                "facts": {},
                "docs": {},
                **place_context(persona, self.loc.currency),
                "docno": self.docno,
            }
        )

    # -- varied numbers -------------------------------------------------------------------
    def docno(self, kind: str = "invoice") -> str:
        """A document number in one of the styles vendors use (INV-2024-0137, 2024/00457,
        R-83421, ...), from the world's stream: numbers differ between worlds and vendors."""
        year = self.base_date.year - (1 if self.rng.random() < 0.1 else 0)
        n = self.rng.randint(11, 99999)
        prefix = {"invoice": ["INV", "RE", "FA", "F", "INV"], "receipt": ["RCPT", "R", "BON"],
                  "quote": ["Q", "OFF", "QT", "ANG"], "order": ["PO", "ORD", "BE"],
                  "booking": ["BK", "RES", "B"]}.get(kind, [kind[:3].upper()])  # fmt: skip
        p = self.rng.choice(prefix)
        style = self.rng.randrange(5)
        if style == 0:
            return f"{p}-{year}-{n % 10000:04d}"
        if style == 1:
            return f"{year}/{n:05d}"
        if style == 2:
            return f"{p}{year % 100:02d}{n:05d}"
        if style == 3:
            return f"{p}-{n}"
        return f"{n + 100000}"

    # -- errors -------------------------------------------------------------------------
    def error(self, path: PathKey, message: str) -> ConfigError:
        who = f" (persona {self.persona.persona_id}, seed {self.seed})"
        return ConfigError(
            self.scenario.file or self.scenario.id,
            dotted(path),
            message + who,
            self.scenario.line(path),
        )

    # -- templates ----------------------------------------------------------------------
    def text(self, src: str, path: PathKey, ctx: dict[str, Any] | None = None) -> str:
        try:
            return self.r.text(src, self.ctx if ctx is None else ctx)
        except TemplateError as e:
            raise self.error(path, str(e)) from None

    def native(self, src: Any, path: PathKey, ctx: dict[str, Any] | None = None) -> Any:
        try:
            return self.r.native(src, self.ctx if ctx is None else ctx)
        except TemplateError as e:
            raise self.error(path, str(e)) from None

    def expr(self, src: str, path: PathKey, ctx: dict[str, Any] | None = None) -> Any:
        """A field that takes an expression accepts it bare or as a ``{{ }}`` template."""
        return self.native(src if self.r.is_template(src) else "{{ " + src + " }}", path, ctx)

    def deep(self, v: Any, path: PathKey, ctx: dict[str, Any]) -> Any:
        """Render every string inside lists and dicts (choice elements, literal values)."""
        if isinstance(v, str):
            return self.native(v, path, ctx)
        if isinstance(v, list):
            return [self.deep(x, (*path, i), ctx) for i, x in enumerate(v)]
        if isinstance(v, dict):
            return {k: self.deep(x, (*path, k), ctx) for k, x in v.items()}
        return v

    def number(self, src: Any, path: PathKey, ctx: dict[str, Any]) -> float:
        v = self.native(src, path, ctx)
        try:
            if isinstance(v, bool):
                raise TypeError
            return float(v)
        except (TypeError, ValueError):
            raise self.error(path, f"expected a number, got {v!r}") from None

    def expand(self, spec: _Each, path: PathKey, ctx: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The contexts a list element is built in: one, none (``when`` false), or one per
        element of ``each``."""
        if spec.each is None:
            if spec.when is None or self.expr(spec.when, (*path, "when"), ctx):
                yield ctx
            return
        items = self.expr(spec.each, (*path, "each"), ctx)
        if not isinstance(items, list | tuple):
            raise self.error((*path, "each"), f"expected a list, got {type(items).__name__}")
        for i, el in enumerate(items):
            local = {**ctx, spec.as_: el, "i": i}
            if spec.when is None or self.expr(spec.when, (*path, "when"), local):
                yield local

    # -- randomness -----------------------------------------------------------------------
    def faker(self, locale: str | None, path: PathKey) -> Faker:
        locale = locale or self.persona.locale
        try:
            f = shared_faker(locale)
        except ValueError as e:
            raise self.error(path, str(e)) from None
        if locale not in self._seeded:  # reseed on first use in this world: determinism
            f.seed_instance(self.rng.getrandbits(64))
            self._seeded.add(locale)
        return f

    def day(
        self, spec: int | tuple[int, int] | str, path: PathKey, ctx: dict[str, Any]
    ) -> date | datetime:
        if isinstance(spec, str):
            v = self.expr(spec, path, ctx)
            if isinstance(v, date):
                return v
            if isinstance(v, int) and not isinstance(v, bool):
                return self.base_date + timedelta(days=v)
            raise self.error(path, f"expected a date or a day offset, got {v!r}")
        off = spec if isinstance(spec, int) else self.rng.randint(*spec)
        return self.base_date + timedelta(days=off)

    def moment(self, at: At, path: PathKey, ctx: dict[str, Any], step: int = 1) -> datetime:
        """``step``: minute granularity of a random time (meetings start on the quarter hour,
        emails at any minute)."""
        d = self.day(at.day, (*path, "day"), ctx)
        if isinstance(d, datetime):
            return d
        if at.workday:
            d = workday(d)
        if isinstance(at.time, str):
            h, m = self._hhmm(self.text(at.time, (*path, "time"), ctx), (*path, "time"))
        else:
            h, m = self.rng.randrange(at.time[0], at.time[1]), self.rng.randrange(0, 60, step)
        return datetime.combine(d, time(h, m))

    def _hhmm(self, s: str, path: PathKey) -> tuple[int, int]:
        h, _, m = s.strip().partition(":")
        if h.isdigit() and m.isdigit() and int(h) < 24 and int(m) < 60:
            return int(h), int(m)
        raise self.error(path, f"time {s!r} must be 'HH:MM'")
