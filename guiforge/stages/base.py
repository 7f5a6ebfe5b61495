"""One small base class for every stage.

A stage is a pure function of (config, input tables) -> output tables, cut into shards:
``plan`` lists the shards (cheap, from the manifests of its inputs) and ``run`` computes one
shard's rows for each output table. The engine names, skips, commits and prunes shards.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from guiforge.lake.blobs import ContentStore
    from guiforge.lake.store import Lake
    from guiforge.lake.writer import Rows
    from guiforge.models.base import ModelClient
    from guiforge.models.config import ModelConfig
    from guiforge.schemas import TableSpec


class InputShard(Protocol):
    """One committed shard of an input table."""

    table: str
    fingerprint: str
    path: str
    rows: int


class RunContext(Protocol):
    """What a stage sees while it runs (the engine's run context, orchestration/context.py,
    is one): the lake, the run, its input shards, its model clients, shared resources."""

    lake: Lake

    @property
    def run_id(self) -> str: ...

    @property
    def seed(self) -> int: ...

    def input_shards(self, table: str, reader: str | None = None,
                     producers: list[str] | None = None) -> Sequence[InputShard]: ...

    def content_store(self, table: str) -> ContentStore: ...

    def model(self, role: str) -> ModelConfig: ...

    def client(self, role: str) -> ModelClient: ...

    def resource(self, key: str, factory: Callable[[], Any]) -> Any: ...


class StageConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass
class ShardPlan:
    """One unit of work: ``key`` is human readable, ``params`` and ``inputs`` (the
    fingerprints of the input shards it reads) enter the shard's fingerprint."""

    key: str
    params: dict[str, Any] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "params": self.params, "inputs": self.inputs}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ShardPlan:
        return cls(key=data["key"], params=dict(data["params"]), inputs=list(data["inputs"]))


class Stage(ABC):
    kind: ClassVar[str]
    config_model: ClassVar[type[StageConfig]]
    version: ClassVar[str] = "1"  # bump when the same config would now produce other rows
    description: ClassVar[str] = ""
    # Modules or packages whose source makes this stage's rows: their files enter the shard
    # fingerprint (orchestration/provenance.py). Empty: the whole guiforge package.
    code: ClassVar[tuple[str, ...]] = ()
    # Output tables this kind brings with their Arrow schemas (a plugin stage's own tables:
    # guiforge.lake.tables.table()); guiforge's tables are in guiforge.schemas.
    tables: ClassVar[tuple[TableSpec, ...]] = ()
    # A stage that plans in waves (``plan_more``): the engine asks it for more after each wave.
    in_waves: ClassVar[bool] = False

    def __init__(self, name: str, config: StageConfig):
        self.name = name
        self.config = config

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    @property
    def model_role(self) -> str | None:
        return None

    def preflight(self) -> None:
        """Check what can be checked before running (files, names); raise a one-line
        GuiforgeError naming the file or field. ``guiforge validate`` calls it."""
        return None

    def data_files(self) -> list[Path]:
        """Files outside the code this stage reads (templates, seeds, cards): their bytes
        enter every shard's fingerprint, so editing one re-runs the stage."""
        return []

    def model_roles(self) -> list[str]:
        """Every model role the stage calls (a judge and its fallback): each enters the
        shard fingerprint. The first is ``model_role``."""
        return [self.model_role] if self.model_role else []

    def failures(self, outputs: dict[str, Rows]) -> tuple[dict[str, int], int]:
        """(failed units by kind, units) in one shard's rows, for the run's
        ``max_failure_share`` (guiforge.failures); ({}, 0): the stage counts none."""
        return {}, 0

    @abstractmethod
    def inputs(self) -> list[str]: ...

    @abstractmethod
    def outputs(self) -> list[str]: ...

    def reads(self) -> dict[str, list[str]]:
        """The columns this stage reads, by input table (distilabel's ``inputs``): the compile
        step checks each is in the table's schema and written by the stages it reads from.
        Undeclared tables are not checked."""
        return {}

    def writes(self) -> dict[str, list[str]]:
        """The columns this stage fills, by output table, where it fills only some; an
        output not named here fills every column of its schema."""
        return {}

    def uses_first(self, table: str) -> int | Literal["all"] | None:
        """How many rows of ``table`` this stage takes as its work, in the rollouts' order
        (guiforge.selection.balanced_sample): a number or ``"all"``; None where it takes
        none as work (it looks rows up). A gate with ``until: used`` gates only that many."""
        return None

    @abstractmethod
    def plan(self, ctx: RunContext) -> list[ShardPlan]: ...

    def plan_more(self, ctx: RunContext, done: list[tuple[ShardPlan, dict | None]]) -> list[ShardPlan]:
        """Shards to run after every shard planned so far (``done``: each with its manifest
        entry, None where it was not committed) — the next wave of a stage whose work
        depends on its own results so far. Must be a function of ``done``, so that a rerun
        plans the same waves. None by default."""
        return []

    @abstractmethod
    def run(self, ctx: RunContext, shard: ShardPlan) -> dict[str, Rows]: ...
