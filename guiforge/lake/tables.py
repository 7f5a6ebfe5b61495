"""Which tables the lake knows and their Arrow schemas: guiforge's own (guiforge.schemas,
registered as the set ``guiforge`` of the ``guiforge.tables`` entry-point group), those of
installed plugins (the same group: a TableSpec, or a mapping of them), and those a stage
kind declares in its ``tables`` (registered by the compile step in every process).
Writers, readers and the DuckDB catalog look tables up here."""

from __future__ import annotations

import threading

import pyarrow as pa

from guiforge.plugins import Registry
from guiforge.schemas import TableSpec


def _check(name: str, spec: TableSpec) -> str | None:
    if spec.name != name:
        return f"registered as {name!r} but the TableSpec is named {spec.name!r}"
    if spec.schema.names[:1] != ["run_id"]:
        return "its schema does not start with run_id (build it with guiforge.lake.tables.table())"
    return None


TABLES: Registry[TableSpec] = Registry("guiforge.tables", "lake table", "a TableSpec (guiforge.schemas)",
                                       lambda o: isinstance(o, TableSpec), _check, sets=True)
_declared: dict[str, tuple[TableSpec, str]] = {}
_lock = threading.Lock()


def table(name: str, description: str, key: tuple[str, ...], fields: list[pa.Field],
          core: tuple[str, ...] = ()) -> TableSpec:
    """A table's spec for a plugin: ``fields`` after the ``run_id`` every row carries."""
    schema = pa.schema([pa.field("run_id", pa.string(), nullable=False), *fields])
    return TableSpec(name, description, tuple(key), schema, tuple(core))


def register_table(spec: TableSpec, owner: str) -> None:
    """Make ``spec`` known in this process (a stage kind's declared output). The same spec
    twice is fine; another spec under a known name is refused."""
    problem = _check(spec.name, spec)
    if problem:
        raise ValueError(f"{owner} declares table {spec.name!r}: {problem}")
    with _lock:
        known = _declared.get(spec.name)
        if known and known[0].schema.equals(spec.schema):
            return
        installed = spec.name in TABLES and TABLES.get(spec.name)
        if known or (installed and not installed.schema.equals(spec.schema)):
            who = known[1] if known else TABLES.plugin(spec.name).value
            raise ValueError(f"{owner} declares table {spec.name!r} with another schema than {who}; rename "
                             "the table or use the schema it already has")
        _declared[spec.name] = (spec, owner)


def all_tables() -> dict[str, TableSpec]:
    """Every table known in this process, by name."""
    out = {name: TABLES.get(name) for name in TABLES.names()}
    with _lock:
        out.update({name: spec for name, (spec, _) in _declared.items() if name not in out})
    return out


def table_spec(name: str) -> TableSpec:
    with _lock:
        if name in _declared:
            return _declared[name][0]
    if name in TABLES:
        return TABLES.get(name)
    raise KeyError(f"unknown lake table {name!r}; known tables: {', '.join(all_tables())}")
