"""Load YAML keeping the line of every key, so errors can say ``file:line: field: ...``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from guiforge.errors import ConfigError

Loc = tuple[str | int, ...]


class _Loader(yaml.SafeLoader):
    pass


def _construct(loader: _Loader, node: yaml.Node, path: Loc, lines: dict[Loc, int]) -> Any:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        loader.flatten_mapping(node)
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if key in out:
                raise ConfigError(
                    "", ".".join(map(str, (*path, key))), "duplicate key", key_node.start_mark.line + 1
                )
            out[key] = _construct(loader, value_node, (*path, key), lines)
            lines[(*path, key)] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(loader, item, (*path, i), lines) for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


def load_yaml(path: str | Path) -> tuple[Any, dict[Loc, int]]:
    """Parse ``path``; returns (data, {field path: line}). Syntax errors become one line."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(str(path), "", "file not found; check the path") from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), "", "not a UTF-8 text file (binary?); give a YAML file") from None
    except OSError as exc:
        raise ConfigError(str(path), "", f"cannot read: {exc.strerror}") from None
    return parse_yaml(text, str(path))


def parse_yaml(text: str, name: str) -> tuple[Any, dict[Loc, int]]:
    lines: dict[Loc, int] = {}
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            data = None if node is None else _construct(loader, node, (), lines)
        finally:
            loader.dispose()
    except ConfigError as exc:
        raise ConfigError(name, exc.field, "duplicate key; each key may appear once", exc.line) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(name, "", f"invalid YAML: {problem}", mark.line + 1 if mark else None) from None
    return data, lines


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
