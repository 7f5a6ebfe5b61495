"""Bounded resynthesis rounds, unrolled into the DAG.

The DAG has no cycles, so ``resynthesize: {rounds: N}`` expands into named copies: round r
has its own ``resynthesize`` head (``resynthesize``, ``resynthesize_r2``, ...) and a copy of
every stage it repeats (``task_gates_r1``, ``rollouts_r1``, ...). Every copy writes the same
tables under its own stage name (so its own manifest), and reads only its round's shards:

- a stage of round r reads a table from the round-r stages that write it, else from the
  stages outside the loop (worlds, skills, the first task candidates);
- a round's ``resynthesize`` head reads round r-1 (its diagnoses and parent tasks);
- content-addressed tables (images, blobs) are read from every round up to r, because a
  frame seen in an earlier round is stored once, there;
- stages outside the loop (exports, reports) read every round.
"""

from __future__ import annotations

from typing import Any

from guiforge.stages.base import Stage

DEFAULT_REPEAT = ("task_gates", "rollouts", "judge", "rl_select", "relabel", "diagnose")
CONTENT_ADDRESSED = frozenset({"images", "blobs"})


class RoundView:
    """The run context as one round's stage sees it: ``input_shards`` lists only the
    producers visible from its round; ``round`` says which round it is."""

    def __init__(self, ctx: Any, stage: InRound):
        self._ctx = ctx
        self._stage = stage
        self.round = stage.round

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    def input_shards(self, table: str, reader: str | None = None):
        visible = self._stage.sources(table, self._ctx.pipeline.producers()[table])
        return self._ctx.input_shards(table, reader, producers=visible)


class InRound(Stage):
    """A stage placed in a round: the same stage kind and config under its round's name."""

    def __init__(self, inner: Stage, round_: int, reads_round: int, rounds: dict[str, int]):
        super().__init__(inner.name, inner.config)
        self.inner = inner
        self.round = round_
        self.reads_round = reads_round
        self._rounds = rounds  # stage name -> round, shared by every stage of the loop
        self.kind = inner.kind
        self.version = inner.version
        self.config_model = inner.config_model
        self.description = inner.description
        self.tables = inner.tables
        self.in_waves = inner.in_waves

    def __repr__(self) -> str:
        return f"InRound({self.inner!r}, round={self.round})"

    @property
    def model_role(self) -> str | None:
        return self.inner.model_role

    def inputs(self) -> list[str]:
        return self.inner.inputs()

    def outputs(self) -> list[str]:
        return self.inner.outputs()

    def reads(self) -> dict[str, list[str]]:
        return self.inner.reads()

    def writes(self) -> dict[str, list[str]]:
        return self.inner.writes()

    def sources(self, table: str, producers: list[str]) -> list[str]:
        """The producers of ``table`` this stage reads (see the module docstring)."""
        r = self.reads_round
        same = [p for p in producers if self._rounds.get(p) == r]
        if not same:
            return [p for p in producers if p not in self._rounds]
        if table in CONTENT_ADDRESSED:
            return [p for p in producers if p not in self._rounds or self._rounds[p] <= r]
        return same

    def uses_first(self, table: str):
        return self.inner.uses_first(table)

    def plan(self, ctx):
        return self.inner.plan(RoundView(ctx, self))

    def plan_more(self, ctx, done):
        return self.inner.plan_more(RoundView(ctx, self), done)

    def run(self, ctx, shard):
        return self.inner.run(RoundView(ctx, self), shard)


def expand_rounds(stages: list[Stage], fail) -> list[Stage]:
    """``stages`` with every ``resynthesize`` stage's rounds unrolled. ``fail(stage, msg)``
    raises the config error for a stage."""
    heads = [s for s in stages if s.kind == "resynthesize"]
    if not heads:
        return stages
    if len(heads) > 1:
        fail(heads[1].name, "one resynthesize stage per pipeline (its `rounds` repeats the loop)")
    head = heads[0]
    names = {s.name for s in stages}
    repeat = head.config.repeat
    if repeat is None:
        repeat = [n for n in DEFAULT_REPEAT if n in names]
    for n in repeat:
        if n not in names or n == head.name:
            fail(head.name, f"repeat names {n!r}, which is not another stage of this pipeline; "
                            f"stages: {', '.join(sorted(names - {head.name}))}")
    by_name = {s.name: s for s in stages}
    rounds: dict[str, int] = {}
    out: list[Stage] = []
    for s in stages:
        if s.name in repeat:
            rounds[s.name] = 0
            out.append(InRound(s, 0, 0, rounds))
        elif s is head:
            rounds[s.name] = 1
            out.append(InRound(s, 1, 0, rounds))
        else:
            out.append(s)
    for r in range(1, head.config.rounds + 1):
        if r > 1:
            name = f"{head.name}_r{r}"
            _check_free(name, names, head, fail)
            rounds[name] = r
            out.append(InRound(type(head)(name=name, config=head.config), r, r - 1, rounds))
        for n in repeat:
            name = f"{n}_r{r}"
            _check_free(name, names, head, fail)
            rounds[name] = r
            original = by_name[n]
            out.append(InRound(type(original)(name=name, config=original.config), r, r, rounds))
    return out


def _check_free(name: str, names: set[str], head: Stage, fail) -> None:
    if name in names:
        fail(head.name, f"round stage {name!r} would clash with the stage of that name; rename it")
