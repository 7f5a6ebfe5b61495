"""What a stage sees while it runs: the lake, the run, its inputs and its model clients."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from guiforge import shutdown
from guiforge.lake.blobs import ContentStore
from guiforge.lake.store import Lake
from guiforge.models import make_client
from guiforge.models.cache import CallCache

if TYPE_CHECKING:
    from guiforge.lake.blobs import ContentStore
    from guiforge.models.base import ModelClient
    from guiforge.models.config import ModelConfig
    from guiforge.orchestration.pipeline import Pipeline


@dataclass(frozen=True)
class InputShard:
    table: str
    fingerprint: str
    path: str
    rows: int


@dataclass
class RunContext:
    pipeline: Pipeline
    lake: Lake
    _clients: dict[str, Any] = field(default_factory=dict)
    _resources: dict[str, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def run_id(self) -> str:
        return self.pipeline.run_id

    @property
    def seed(self) -> int:
        return self.pipeline.config.seed

    def input_shards(self, table: str, reader: str | None = None,
                     producers: list[str] | None = None) -> list[InputShard]:
        """The committed, non-empty shards of ``table`` in this run, from the manifests of
        the stages that produce it (only ``producers`` where given, but ``reader`` itself),
        in a stable order."""
        out = []
        for producer in self.pipeline.producers()[table]:
            if producer == reader or (producers is not None and producer not in producers):
                continue
            for entry in self.lake.manifest_entries(self.run_id, producer):
                written = entry["outputs"].get(table) or {}
                if written.get("rows"):
                    # Relative to the lake root (old lakes recorded absolute paths): the same
                    # in a moved or copied lake, so plans and fingerprints do not change.
                    path = self.lake.relative(written["path"])
                    out.append(InputShard(table, entry["fingerprint"], path, written["rows"]))
        return sorted(out, key=lambda s: s.path)

    def read(self, shard: InputShard) -> pa.Table:
        return self.lake.read_shard(shard.path)

    def content_store(self, table: str) -> ContentStore:
        """This run's store of screenshots (``images``) or files (``blobs``), shared by its
        shards; the engine drops rows already committed when it commits a shard."""
        return self.resource(f"content:{table}", lambda: ContentStore(self.lake, table, self.run_id))

    def model(self, role: str) -> ModelConfig:
        return self.pipeline.model(role)

    def client(self, role: str) -> ModelClient:
        with self._lock:
            if role not in self._clients:
                self._clients[role] = make_client(self.model(role), CallCache(self.lake), role=role)
            return self._clients[role]

    def __post_init__(self) -> None:
        # A signal closes the environment pools at once, so shards in flight stop now.
        self._unregister = shutdown.on_shutdown(self.close)

    def resource(self, key: str, factory):
        """A shared object for this run in this process (an environment pool, a world
        index), made once by ``factory()`` and closed by :meth:`close`."""
        with self._lock:
            if key not in self._resources:
                shutdown.check()  # nothing new starts while the run stops
                self._resources[key] = factory()
            return self._resources[key]

    def close(self) -> None:
        getattr(self, "_unregister", lambda: None)()
        with self._lock:
            resources, self._resources = self._resources, {}
        for value in resources.values():
            close = getattr(value, "close", None)
            if close is not None:
                close()
