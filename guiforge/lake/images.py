"""Read screenshots from the lake by hash: the one way stages get image bytes back.

Rows elsewhere carry only a frame's sha256. ``ImageReader.get_many(hashes)`` returns their
bytes in one pass: an index (sha256 -> shard file) is read once from the ``images`` column
``sha256`` only, each shard holding a wanted frame is read once with a filter on the hash,
and recently read frames stay in a bounded cache (a judge reads the last frame of k samples
of one task, often the same frame).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute as pc

from guiforge.lake.store import Lake
from guiforge.lake.thumbs import thumbnail_of


class MissingImage(KeyError):
    """A hash that no committed ``images`` shard holds."""


class ImageReader:
    def __init__(self, lake: Lake, cache_bytes: int = 256 << 20):
        self.lake = lake
        self.cache_bytes = cache_bytes
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cached = 0
        self._index: dict[str, str] | None = None
        self._thumbs: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self.reads = 0  # shard reads, for tests and benchmarks

    def _load_index(self) -> dict[str, str]:
        if self._index is None:
            index: dict[str, str] = {}
            for f in self.lake.shard_files("images"):
                for sha in self.lake.read_shard(f.path, columns=["sha256"]).column("sha256").to_pylist():
                    index.setdefault(sha, f.path)
            self._index = index
        return self._index

    def __contains__(self, sha256: str) -> bool:
        with self._lock:
            return sha256 in self._cache or sha256 in self._load_index()

    def get(self, sha256: str) -> bytes:
        return self.get_many([sha256])[sha256]

    def get_many(self, hashes: Iterable[str], missing_ok: bool = False) -> dict[str, bytes]:
        """Bytes for every hash; an unknown hash raises :class:`MissingImage` unless
        ``missing_ok`` (then it is left out of the result)."""
        wanted = list(dict.fromkeys(h for h in hashes if h))
        out: dict[str, bytes] = {}
        with self._lock:
            for sha in wanted:
                if sha in self._cache:
                    self._cache.move_to_end(sha)
                    out[sha] = self._cache[sha]
            todo = [sha for sha in wanted if sha not in out]
            if not todo:
                return out
            index = self._load_index()
            if any(sha not in index for sha in todo):  # shards committed since (a later round): look again
                self._index = None
                index = self._load_index()
            by_path: dict[str, list[str]] = {}
            for sha in todo:
                path = index.get(sha)
                if path is None:
                    if missing_ok:
                        continue
                    raise MissingImage(f"no images shard in {self.lake.root} holds {sha}")
                by_path.setdefault(path, []).append(sha)
        for path, shas in by_path.items():
            table = self.lake.read_shard(path, columns=["sha256", "data"])
            table = table.filter(pc.is_in(table.column("sha256"), value_set=_array(shas)))
            with self._lock:
                self.reads += 1
                for sha, data in zip(table.column("sha256").to_pylist(), table.column("data").to_pylist(),
                                     strict=True):
                    out[sha] = data
                    self._remember(sha, data)
        return out

    def thumbs(self, hashes: Iterable[str]) -> dict[str, bytes]:
        """The thumbnail of every known hash (guiforge.lake.thumbs): the one stored with the
        frame, else (a lake from before thumbnails) made from its bytes, once."""
        wanted = list(dict.fromkeys(h for h in hashes if h))
        with self._lock:
            todo = [sha for sha in wanted if sha not in self._thumbs]
            index = self._load_index() if todo else {}
        by_path: dict[str, list[str]] = {}
        for sha in todo:
            if sha in index:
                by_path.setdefault(index[sha], []).append(sha)
        found: dict[str, bytes | None] = {}
        for path, shas in by_path.items():
            try:
                table = self.lake.read_shard(path, columns=["sha256", "thumb"])
            except (KeyError, pa.ArrowInvalid):  # a shard written before thumbnails
                found.update(dict.fromkeys(shas))
                continue
            table = table.filter(pc.is_in(table.column("sha256"), value_set=_array(shas)))
            found.update(zip(table.column("sha256").to_pylist(), table.column("thumb").to_pylist(), strict=True))
        missing = [sha for sha, thumb in found.items() if thumb is None]
        for sha, data in self.get_many(missing, missing_ok=True).items():
            found[sha] = thumbnail_of(data)
        with self._lock:
            if len(self._thumbs) > 200_000:  # 2.3 kB each: a long-lived reader stays under ~0.5 GB
                self._thumbs.clear()
            self._thumbs.update((sha, t) for sha, t in found.items() if t is not None)
            return {sha: self._thumbs[sha] for sha in wanted if sha in self._thumbs}

    def _remember(self, sha: str, data: bytes) -> None:
        if sha in self._cache or len(data) > self.cache_bytes:
            return
        self._cache[sha] = data
        self._cached += len(data)
        while self._cached > self.cache_bytes:
            _, old = self._cache.popitem(last=False)
            self._cached -= len(old)


def _array(values: list[str]):
    return pa.array(values, pa.string())
