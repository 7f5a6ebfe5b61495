"""What changed between two states: app state JSON (per app, per record, per field) and
workspace files (per file, per cell, paragraph, slide or line; guiforge.verify.file_diff).

A change knows where it happened at every depth (:class:`Level`): the collection as a pattern
(``chat.threads[*].messages``), the record's own key (``chat.threads[t_1].messages[m_9]``), the
record before and after, and the field under the record the change is in. The side-damage
check (guiforge.verify.side_effects) holds each change against what the task may change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_MISSING = object()
# record lists are matched by the first of these keys that every record holds, once each
_IDENTITY_KEYS = ("id", "sku", "code", "iata", "email")


@dataclass(frozen=True)
class Level:
    """One record on the way to a change (or the collection itself, at the top)."""

    pattern: str  # the collection, record keys as [*]: "mail.inbox", "chat.threads[*].messages"
    key: str  # this record: "mail.inbox[e_12]"
    before: Any  # the record in s0 (None when it was added)
    after: Any  # the record in the final state (None when it was removed)
    field: str | None  # the field under this record that holds the change; None: the record itself


@dataclass(frozen=True)
class Change:
    kind: str  # added | removed | changed
    levels: tuple[Level, ...]  # outermost first; empty for a value outside any record list
    path: str  # where, concretely: "mail.inbox[e_12].subject", "report.xlsx!Summary!B3"
    before: Any = None
    after: Any = None
    file: str | None = None  # workspace changes: the file (its unit in ``unit``)
    unit: str | None = None  # "Summary!B3", "paragraph 4", "slide 2", "line 7"

    def describe(self) -> str:
        def short(v: Any) -> str:
            text = repr(v)
            return text if len(text) <= 60 else text[:57] + "..."

        if self.kind == "changed":
            return f"{self.path} changed from {short(self.before)} to {short(self.after)}"
        return f"{self.path} {self.kind}" + (f" ({short(self.after)})" if self.kind == "added" and self.after else "")


def identity_key(before: list, after: list) -> str | None:
    """The key that names each record of two record lists, or None (compare by position)."""
    records = [*before, *after]
    if not records or not all(isinstance(r, dict) for r in records):
        return None
    for key in _IDENTITY_KEYS:
        if all(isinstance(r.get(key), str | int) and not isinstance(r.get(key), bool) for r in records) \
                and len({r[key] for r in before}) == len(before) and len({r[key] for r in after}) == len(after):
            return key
    return None


def empty_like(app_state: Any) -> Any:
    """An app's state with every list emptied: what an app the task did not seed starts with
    (the apps' own empty states hold no records)."""
    if isinstance(app_state, dict):
        return {k: ([] if isinstance(v, list) else v) for k, v in app_state.items()}
    return app_state


def diff_apps(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    """Every change from ``before`` (s0) to ``after``, app by app. An app missing from s0 is
    taken as empty (every record in it is new)."""
    changes: list[Change] = []
    for app in sorted(set(before) | set(after)):
        a = before.get(app, _MISSING)
        b = after.get(app, _MISSING)
        if a is _MISSING and b is not _MISSING:
            a = empty_like(b)
        _walk(a, b, app, app, (), changes)
    return changes


def _walk(a: Any, b: Any, pattern: str, path: str, levels: tuple[Level, ...], out: list[Change]) -> None:
    if a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            inner = levels
            if levels and levels[-1].field is None and levels[-1].key == path:
                inner = (*levels[:-1], _with_field(levels[-1], str(key)))
            _walk(a.get(key, _MISSING), b.get(key, _MISSING), f"{pattern}.{key}", f"{path}.{key}", inner, out)
        return
    if isinstance(a, list) and isinstance(b, list) and (key := identity_key(a, b)) is not None:
        _walk_records(a, b, key, pattern, path, levels, out)
        return
    if isinstance(a, list) and isinstance(b, list) and a and b and all(isinstance(r, dict) for r in [*a, *b]) \
            and len(a) == len(b):
        for i, (ra, rb) in enumerate(zip(a, b, strict=True)):  # records without keys: by position
            if ra != rb:
                key_path = f"{path}[{i}]"
                _walk(ra, rb, f"{pattern}[*]", key_path, (*levels, Level(pattern, key_path, ra, rb, None)), out)
        return
    if isinstance(a, list) and isinstance(b, list) and all(isinstance(r, dict) for r in [*a, *b]):
        _walk_records(a, b, None, pattern, path, levels, out)
        return
    kind = "added" if a is _MISSING else "removed" if b is _MISSING else "changed"
    out.append(Change(kind, levels, path, None if a is _MISSING else a, None if b is _MISSING else b))


def _with_field(level: Level, field: str) -> Level:
    return Level(level.pattern, level.key, level.before, level.after, field)


def _walk_records(a: list, b: list, key: str | None, pattern: str, path: str, levels: tuple[Level, ...],
                  out: list[Change]) -> None:
    """Two record lists matched by ``key`` (or, with no key, records equal as a whole)."""
    if key is None:
        rest = list(b)
        for ra in a:
            if ra in rest:
                rest.remove(ra)
            else:
                out.append(_record_change("removed", ra, None, pattern, f"{path}[?]", levels))
        for rb in rest:
            out.append(_record_change("added", None, rb, pattern, f"{path}[?]", levels))
        return
    old = {r[key]: r for r in a}
    new = {r[key]: r for r in b}
    for ident in [*old, *(i for i in new if i not in old)]:
        ra, rb = old.get(ident), new.get(ident)
        key_path = f"{path}[{ident}]"
        if ra is None or rb is None:
            out.append(_record_change("added" if ra is None else "removed", ra, rb, pattern, key_path, levels))
        elif ra != rb:
            _walk(ra, rb, f"{pattern}[*]", key_path, (*levels, Level(pattern, key_path, ra, rb, None)), out)


def _record_change(kind: str, before: Any, after: Any, pattern: str, path: str, levels: tuple[Level, ...]) -> Change:
    return Change(kind, (*levels, Level(pattern, path, before, after, None)), path, before, after)
