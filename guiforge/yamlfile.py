"""The one YAML loader of guiforge (pipeline files, skill cards, scenarios, seed data): it keeps
the line of every value, so errors found later (by pydantic, by a stage, by the scenario
engine) can say ``file:line: field: ...``, and it refuses in one line what no hand-written
file needs: more than :data:`MAX_BYTES`, aliases that expand past :data:`MAX_VALUES` values
(an alias bomb), an alias that contains itself, nesting deeper than :data:`MAX_DEPTH`, and
duplicate keys. Aliases stay shared objects (never copied), so a file costs what it weighs."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from guiforge.errors import ConfigError

PathKey = tuple[str | int, ...]
Loc = PathKey
M = TypeVar("M", bound=BaseModel)

MAX_BYTES = 1 << 20  # 1 MiB: fifty times the largest shipped scenario
MAX_VALUES = 100_000  # values once every alias is expanded; shipped files hold a few hundred
MAX_DEPTH = 64  # nesting levels


class _Loader(yaml.SafeLoader):
    pass


class YamlSource:
    """Parsed YAML data plus a map from value path to 1-based line number."""

    def __init__(self, file: str, data: Any, lines: dict[PathKey, int]):
        self.file, self.data, self.lines = file, data, lines

    def line(self, path: PathKey) -> int | None:
        """The line of ``path`` or of its nearest ancestor that has one."""
        return line_of(self.lines, tuple(path))

    def error(self, path: PathKey, message: str) -> ConfigError:
        return ConfigError(self.file, dotted(path), message, self.line(path))

    def validate(self, model: type[M]) -> M:
        """Validate the data as ``model``; the first error becomes a one-line ConfigError
        (a misspelt key names the key it was probably meant to be)."""
        try:
            return model.model_validate(self.data)
        except ValidationError as e:
            errors = e.errors()
            extras = [x for x in errors if x["type"] == "extra_forbidden"]
            err = extras[0] if extras else errors[0]
            path = data_path(self.data, err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            if extras:
                missing = [str(x["loc"][-1]) for x in errors
                           if x["type"] == "missing" and x["loc"][:-1] == err["loc"][:-1]]
                close = difflib.get_close_matches(str(err["loc"][-1]), missing, n=1)
                msg = (f"unknown field; did you mean {close[0]!r}?" if close
                       else "unknown field (see the README for the fields allowed here)")
            raise self.error(path, msg) from None


def read_text(path: str | Path, what: str = "YAML file", max_bytes: int = MAX_BYTES) -> str:
    """A hand-written input file's text, refused in one line when it is missing, not UTF-8
    or larger than ``max_bytes`` (checked before reading it)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise ConfigError(str(path), "", f"{size:,} bytes is more than the {max_bytes:,} a {what} may have; "
                                             "split it or check that this is the file you meant")
        with path.open("rb") as fh:
            raw = fh.read(max_bytes + 1)  # a file that grows meanwhile is cut here, then refused
    except FileNotFoundError:
        raise ConfigError(str(path), "", "cannot read: no such file; check the path") from None
    except IsADirectoryError:
        raise ConfigError(str(path), "", f"is a folder; give a {what}") from None
    except OSError as exc:
        raise ConfigError(str(path), "", f"cannot read: {exc.strerror}") from None
    if len(raw) > max_bytes:
        raise ConfigError(str(path), "", f"more than the {max_bytes:,} bytes a {what} may have")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(str(path), "", f"not a UTF-8 text file (binary?); give a {what}") from None


def read_yaml(path: str | Path, max_bytes: int = MAX_BYTES) -> YamlSource:
    """Parse the YAML file ``path`` (see the module docstring for what it refuses)."""
    return parse_source(read_text(path, max_bytes=max_bytes), str(path))


def load_yaml(path: str | Path) -> tuple[Any, dict[Loc, int]]:
    """Parse ``path``; returns (data, {field path: line})."""
    src = read_yaml(path)
    return src.data, src.lines


def parse_yaml(text: str, name: str) -> tuple[Any, dict[Loc, int]]:
    src = parse_source(text, name)
    return src.data, src.lines


def parse_source(text: str, name: str, max_values: int = MAX_VALUES) -> YamlSource:
    """Parse YAML ``text`` (from ``name``, for messages) into data and lines."""
    if len(text) > MAX_BYTES * 4:  # text that did not come from a file (a model's proposal)
        raise ConfigError(name, "", f"{len(text):,} characters is more than a YAML document may have")
    lines: dict[Loc, int] = {}
    try:
        loader = _Loader(text)
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (a NUL byte, a control code)
        line = text[:exc.position].count("\n") + 1
        raise ConfigError(name, "", f"invalid YAML: character #x{exc.character:04x} is not allowed in YAML "
                                    "(a binary or corrupted file?)", line) from None
    try:
        node = loader.get_single_node()
        if node is None:
            return YamlSource(name, None, lines)
        _check_size(node, name, max_values)
        _walk(loader, node, (), lines, set(), name)
        data = loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(name, "", f"invalid YAML: {problem}", mark.line + 1 if mark else None) from None
    except RecursionError:
        raise ConfigError(name, "", f"nested more than {MAX_DEPTH} levels deep; flatten it") from None
    finally:
        loader.dispose()
    return YamlSource(name, data, lines)


def _check_size(root: yaml.Node, name: str, max_values: int) -> None:
    """Refuse a document whose aliases expand past ``max_values`` values, contain themselves,
    or that nests past MAX_DEPTH, without expanding anything (sizes are memoised per node)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node, depth: int) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        line = node.start_mark.line + 1
        if key in open_nodes:
            raise ConfigError(name, "", "an alias refers to the value that contains it (a recursive structure); "
                                        "write the value out", line)
        if depth > MAX_DEPTH:
            raise ConfigError(name, "", f"nested more than {MAX_DEPTH} levels deep; flatten it", line)
        open_nodes.add(key)
        total = 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                total += size(k, depth + 1) + size(v, depth + 1)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                total += size(item, depth + 1)
        open_nodes.discard(key)
        if total > max_values:
            raise ConfigError(name, "", f"aliases expand to more than {max_values:,} values (an alias bomb?); "
                                        "write the values out or use fewer aliases", line)
        sizes[key] = total
        return total

    size(root, 0)


def _walk(loader: _Loader, node: yaml.Node, path: Loc, lines: dict[Loc, int], seen: set[int], name: str) -> None:
    """Record the line of every value (an aliased value once, where it is first written) and
    refuse duplicate keys."""
    lines.setdefault(path, node.start_mark.line + 1)
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)  # merge keys (<<: *base) become ordinary keys
        keys: set[Any] = set()
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True) if isinstance(key_node, yaml.ScalarNode) else None
            if key is None:
                continue
            if key in keys:
                raise ConfigError(name, ".".join(map(str, (*path, key))), "duplicate key; each key may appear once",
                                  key_node.start_mark.line + 1)
            keys.add(key)
            lines[(*path, key)] = key_node.start_mark.line + 1
            _walk(loader, value_node, (*path, key), lines, seen, name)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(loader, item, (*path, i), lines, seen, name)


def line_of(lines: dict[Loc, int], loc: Loc) -> int | None:
    """The line of the deepest known prefix of ``loc``."""
    for n in range(len(loc), -1, -1):
        if loc[:n] in lines:
            return lines[loc[:n]]
    return None


def describe_validation_error(exc: Any, file: str, lines: dict[Loc, int], prefix: Loc = ()) -> ConfigError:
    """The first pydantic error as a one-line ConfigError naming file, line and field."""
    err = exc.errors()[0]
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-after")))
    full = (*prefix, *loc)
    field = ".".join(str(p) for p in full) or "(top level)"
    kind = err["type"]
    msg = err["msg"]
    if kind == "extra_forbidden":
        msg = "unknown key; remove it or check its spelling"
    elif kind == "missing":
        msg = "required key is missing"
    elif "input" in err and not isinstance(err["input"], dict | list):
        msg = f"{msg} (got {err['input']!r})"
    return ConfigError(file, field, msg, line_of(lines, full))


def data_path(data: Any, loc: tuple[Any, ...]) -> PathKey:
    """Keep the parts of a pydantic error location that index the data; drop the union
    member and validator tags pydantic inserts between them."""
    out: list[str | int] = []
    cur = data
    for part in loc:
        if (isinstance(cur, dict) and part in cur
                or isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur)):
            out.append(part)
            cur = cur[part]
        elif isinstance(cur, dict) and isinstance(part, str) and not _is_tag(part):
            out.append(part)  # a missing or unknown key: still worth naming
            cur = None
    return tuple(out)


def _is_tag(part: str) -> bool:
    return "[" in part or part in {"str", "int", "float", "bool", "list", "dict"} or part[:1].isupper()


def dotted(path: PathKey) -> str:
    s = ""
    for p in path:
        s += f"[{p}]" if isinstance(p, int) else (f".{p}" if s else str(p))
    return s
