"""A content-addressed cache of model calls kept in the lake (``_cache/calls``), so a rerun
of the same prompts costs nothing, on any filesystem the lake lives on."""

from __future__ import annotations

import json
from typing import Any

from guiforge.lake.store import Lake


class CallCache:
    def __init__(self, lake: Lake):
        self.lake = lake
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> str:
        return self.lake.path("_cache", "calls", key[:2], f"{key}.json")

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            value = self.lake.read_json(path)
        except (FileNotFoundError, json.JSONDecodeError):
            self.misses += 1
            return None
        self.hits += 1
        return value

    def put(self, key: str, value: dict[str, Any]) -> None:
        self.lake.write_json(value, self._path(key))
