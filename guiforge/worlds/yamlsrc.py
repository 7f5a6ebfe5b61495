"""Read YAML while remembering the line of every value, so that errors found later (by
pydantic or by the scenario engine) can name ``file:line: field``."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from guiforge.errors import ConfigError

PathKey = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)


class YamlSource:
    """Parsed YAML data plus a map from value path to 1-based line number."""

    def __init__(self, file: str, data: Any, lines: dict[PathKey, int]):
        self.file, self.data, self.lines = file, data, lines

    def line(self, path: PathKey) -> int | None:
        """The line of ``path`` or of its nearest ancestor that has one."""
        p = tuple(path)
        while p:
            if p in self.lines:
                return self.lines[p]
            p = p[:-1]
        return self.lines.get(())

    def error(self, path: PathKey, message: str) -> ConfigError:
        return ConfigError(self.file, dotted(path), message, self.line(path))

    def validate(self, model: type[M]) -> M:
        """Validate the data as ``model``; the first error becomes a one-line ConfigError."""
        try:
            return model.model_validate(self.data)
        except ValidationError as e:
            errors = e.errors()
            # a misspelt key shows up as "extra" plus "missing": report the spelling
            extras = [x for x in errors if x["type"] == "extra_forbidden"]
            err = extras[0] if extras else errors[0]
            path = data_path(self.data, err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            if extras:
                missing = [
                    str(x["loc"][-1])
                    for x in errors
                    if x["type"] == "missing" and x["loc"][:-1] == err["loc"][:-1]
                ]
                close = difflib.get_close_matches(str(err["loc"][-1]), missing, n=1)
                msg = (
                    f"unknown field; did you mean {close[0]!r}?"
                    if close
                    else "unknown field (see the README for the fields allowed here)"
                )
            raise self.error(path, msg) from None


def load_yaml(path: str | Path) -> YamlSource:
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(file, "", "not a UTF-8 text file (binary?); give a YAML file") from None
    except OSError as e:
        raise ConfigError(file, "", f"cannot read: {e.strerror}") from None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(file, "", f"invalid YAML: {problem}", line) from None
    finally:
        loader.dispose()
    lines: dict[PathKey, int] = {}
    if node is not None:
        _walk(node, (), lines)
    return YamlSource(file, data, lines)


def _walk(node: yaml.Node, path: PathKey, lines: dict[PathKey, int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode):
                key = k.value
                lines[(*path, key)] = k.start_mark.line + 1
                _walk(v, (*path, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            _walk(v, (*path, i), lines)


def data_path(data: Any, loc: tuple[Any, ...]) -> PathKey:
    """Keep the parts of a pydantic error location that index the data; drop the union
    member and validator tags pydantic inserts between them."""
    out: list[str | int] = []
    cur = data
    for part in loc:
        if (
            isinstance(cur, dict)
            and part in cur
            or isinstance(cur, list)
            and isinstance(part, int)
            and 0 <= part < len(cur)
        ):
            out.append(part)
            cur = cur[part]
        elif isinstance(cur, dict) and isinstance(part, str) and not _is_tag(part):
            out.append(part)  # a missing or unknown key: still worth naming
            cur = None
    return tuple(out)


def _is_tag(part: str) -> bool:
    return (
        "[" in part or part in {"str", "int", "float", "bool", "list", "dict"} or part[:1].isupper()
    )


def dotted(path: PathKey) -> str:
    s = ""
    for p in path:
        s += f"[{p}]" if isinstance(p, int) else (f".{p}" if s else str(p))
    return s
