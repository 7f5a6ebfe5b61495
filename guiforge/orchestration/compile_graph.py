"""The compile step's checks over tables and columns (see compile.py): every table a stage
writes has a schema, every table it reads has a producer, the stages run in dependency
order, and every column a stage declares it reads is in the table and written by the
stages it reads from."""

from __future__ import annotations

from guiforge.lake.tables import all_tables, register_table
from guiforge.orchestration.compile_where import Where
from guiforge.schemas import TableSpec


def declare_tables(stages: list, where: Where) -> None:
    """Register the tables the stages declare (``Stage.tables``: a plugin stage's own
    outputs with their Arrow schemas), then check every output has a schema."""
    for s in stages:
        for spec in getattr(s, "tables", ()) or ():
            if not isinstance(spec, TableSpec):
                where.fail(("stages", s.name), f"stage kind {s.kind!r} declares a table that is not a TableSpec "
                                               f"({type(spec).__name__}); build it with guiforge.lake.tables.table()")
            try:
                register_table(spec, f"stage kind {s.kind}")
            except ValueError as exc:
                where.fail(("stages", s.name), str(exc))
    known = all_tables()
    for s in stages:
        for t in s.outputs():
            if t not in known:
                where.fail(("stages", s.name), f"writes table {t!r}, which has no schema: declare it in the stage "
                                               "kind's `tables` (a TableSpec) or register it under guiforge.tables")


def visible_producers(stage, producers: dict[str, list[str]], table: str) -> list[str]:
    """The stages whose ``table`` rows ``stage`` reads (a round's stage: only its round's)."""
    names = producers[table]
    return stage.sources(table, names) if hasattr(stage, "sources") else names


def order(stages: list, where: Where) -> list:
    """Topological order by tables: a stage runs after every stage producing its inputs."""
    producers: dict[str, list[str]] = {}
    for s in stages:
        for t in s.outputs():
            producers.setdefault(t, []).append(s.name)
    for s in stages:
        for t in s.inputs():
            if t not in producers:
                where.fail(("stages", s.name),
                           f"reads table {t!r} but no stage in this pipeline produces it; add a stage that "
                           f"writes {t!r} or remove {s.name!r}")
    by_name = {s.name: s for s in stages}
    done: list = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if any(d.name == name for d in done):
            return
        if name in visiting:
            where.fail(("stages", name), "stages depend on each other in a cycle")
        visiting.add(name)
        stage = by_name[name]
        for t in stage.inputs():
            # A stage in a resynthesis round reads only its round's producers (orchestration/rounds.py).
            for p in visible_producers(stage, producers, t):
                if p != name:
                    visit(p)
        visiting.discard(name)
        done.append(by_name[name])

    for s in stages:
        visit(s.name)
    return done


def check_columns(stages: list, where: Where) -> None:
    """Every column a stage reads (``Stage.reads()``) is a column of its table, and every
    stage it reads that table from writes it (``Stage.writes()``; undeclared: all)."""
    known = all_tables()
    by_name = {s.name: s for s in stages}
    producers: dict[str, list[str]] = {}
    for s in stages:
        for t in s.outputs():
            producers.setdefault(t, []).append(s.name)
    for s in stages:
        for table, columns in s.reads().items():
            if table not in s.inputs():
                where.fail(("stages", s.name), f"stage kind {s.kind!r} declares columns of {table!r}, which is not "
                                               f"among the tables it reads ({', '.join(s.inputs())})")
            schema = known[table].schema.names
            for column in columns:
                if column not in schema:
                    where.fail(("stages", s.name), f"reads {table}.{column}, but the {table} table has no column "
                                                   f"{column!r} (guiforge.schemas)")
            for p in visible_producers(s, producers, table):
                written = by_name[p].writes().get(table)
                lacking = [c for c in columns if written is not None and c not in written]
                if p != s.name and lacking:
                    where.fail(("stages", s.name), f"reads {table}.{lacking[0]}, which stage {p!r} (kind "
                                                   f"{by_name[p].kind!r}) does not write; give {p!r} that column "
                                                   f"or read {table} from another stage")
