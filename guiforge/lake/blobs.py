"""Content-addressed storage for screenshots (``images``) and files (``blobs``).

Rows elsewhere carry only the sha256. A shard holds the content of every hash it refers
to, except hashes already committed in the same run: that set is read from the lake and
checked again by the engine right before the shard commits (:meth:`ContentStore.uncommitted`),
so a committed row never points at content that only an uncommitted (or failed) shard held.
Two shards in flight may both store one hash; readers tolerate such duplicates.
"""

from __future__ import annotations

import io
import threading
from typing import Any

from guiforge.lake.fingerprint import sha256_bytes
from guiforge.lake.store import Lake
from guiforge.lake.thumbs import thumbnail

CONTENT_TABLES = ("images", "blobs")


class ContentStore:
    """The committed hashes of one content table, in one run (``run_id=None``: the whole
    lake, for readers)."""

    def __init__(self, lake: Lake, table: str, run_id: str | None = None):
        if table not in CONTENT_TABLES:
            raise ValueError(f"content store table must be images or blobs, not {table!r}")
        self.lake, self.table, self.run_id = lake, table, run_id
        self._lock = threading.Lock()
        self._committed: set[str] | None = None

    def _load(self) -> set[str]:
        if self._committed is None:
            col = self.lake.read_table(self.table, self.run_id, columns=["sha256"]).column("sha256")
            self._committed = set(col.to_pylist())
        return self._committed

    def claim(self, sha256: str) -> bool:
        """True if a shard referring to this content must store it (not committed yet)."""
        with self._lock:
            return sha256 not in self._load()

    def release(self, hashes: list[str]) -> None:
        """Nothing to give back: claims are not reservations (kept for callers)."""

    def uncommitted(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``rows`` less those whose hash committed meanwhile (another shard of this run)."""
        with self._lock:
            committed = self._load()
            return [r for r in rows if r["sha256"] not in committed]

    def mark_committed(self, hashes: list[str]) -> None:
        with self._lock:
            self._load().update(hashes)

    def forget(self) -> None:
        """Re-read the committed set on next use (after shards were deleted)."""
        with self._lock:
            self._committed = None

    def __contains__(self, sha256: str) -> bool:
        with self._lock:
            return sha256 in self._load()


class ShardContent:
    """Collects the content rows of one shard: each hash once."""

    def __init__(self, store: ContentStore):
        self.store = store
        self.rows: list[dict[str, Any]] = []
        self._held: set[str] = set()

    def abandon(self) -> None:
        self.rows, self._held = [], set()

    def _wants(self, sha: str) -> bool:
        if sha in self._held or not self.store.claim(sha):
            return False
        self._held.add(sha)
        return True

    def add_image(self, data: bytes, fmt: str | None = None) -> tuple[str, int, int]:
        # heavy: PIL, imported when this runs
        from PIL import Image

        sha = sha256_bytes(data)
        with Image.open(io.BytesIO(data)) as im:
            width, height = im.size
            fmt = fmt or (im.format or "").lower()
            if self._wants(sha):  # a new frame: its thumbnail now, decoded once (a judge reads it)
                self.rows.append({"sha256": sha, "data": data, "width": width, "height": height, "format": fmt,
                                  "thumb": thumbnail(im)})
        return sha, width, height

    def add_blob(self, data: bytes, name: str | None = None, media_type: str | None = None) -> str:
        sha = sha256_bytes(data)
        if self._wants(sha):
            self.rows.append(
                {"sha256": sha, "data": data, "size": len(data), "media_type": media_type, "name": name}
            )
        return sha
