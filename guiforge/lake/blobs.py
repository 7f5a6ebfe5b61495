"""Content-addressed storage for screenshots (``images``) and files (``blobs``).

Rows elsewhere carry only the sha256. A hash already committed anywhere in the lake, or
already claimed by another shard of this process, is not stored again.
"""

from __future__ import annotations

import io
import threading
from typing import Any

from guiforge.lake.fingerprint import sha256_bytes
from guiforge.lake.store import Lake


class ContentStore:
    def __init__(self, lake: Lake, table: str):
        if table not in ("images", "blobs"):
            raise ValueError(f"content store table must be images or blobs, not {table!r}")
        self.lake, self.table = lake, table
        self._lock = threading.Lock()
        self._known: set[str] | None = None

    def _load_known(self) -> set[str]:
        if self._known is None:
            col = self.lake.read_table(self.table, columns=["sha256"]).column("sha256")
            self._known = set(col.to_pylist())
        return self._known

    def claim(self, sha256: str) -> bool:
        """True if the caller should store this content (nobody has it yet)."""
        with self._lock:
            known = self._load_known()
            if sha256 in known:
                return False
            known.add(sha256)
            return True

    def release(self, hashes: list[str]) -> None:
        """Give back claims whose shard failed before committing, so another shard stores them."""
        with self._lock:
            known = self._load_known()
            known.difference_update(hashes)

    def __contains__(self, sha256: str) -> bool:
        with self._lock:
            return sha256 in self._load_known()


class ShardContent:
    """Collects the new rows of one shard for a content table."""

    def __init__(self, store: ContentStore):
        self.store = store
        self.rows: list[dict[str, Any]] = []

    def abandon(self) -> None:
        self.store.release([r["sha256"] for r in self.rows])
        self.rows = []

    def add_image(self, data: bytes, fmt: str | None = None) -> tuple[str, int, int]:
        from PIL import Image

        sha = sha256_bytes(data)
        with Image.open(io.BytesIO(data)) as im:
            width, height = im.size
            fmt = fmt or (im.format or "").lower()
        if self.store.claim(sha):
            self.rows.append({"sha256": sha, "data": data, "width": width, "height": height, "format": fmt})
        return sha, width, height

    def add_blob(self, data: bytes, name: str | None = None, media_type: str | None = None) -> str:
        sha = sha256_bytes(data)
        if self.store.claim(sha):
            self.rows.append(
                {"sha256": sha, "data": data, "size": len(data), "media_type": media_type, "name": name}
            )
        return sha
