"""The file gate: every file a task refers to exists, opens with its own library (a corrupt
or truncated file is caught), and holds the facts its instruction and rubric rely on.

``facts`` entries take three shapes:

- ``(path, Fact)``: that file states the fact's value in a form people write it (the same
  forms the world consistency check accepts: 1234.5, 1,234.50, 1.234,50 €; ISO or long dates);
- ``(path, "text")``: that file contains the text (case and whitespace ignored);
- ``Fact``: at least one of the ``required`` files states it.

Each problem is one line naming the file and what is wrong; an empty list means the gate
passes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from guiforge.preparers.file_read import FileReadError, read_file_text
from guiforge.worlds.consistency import quotes
from guiforge.worlds.model import Fact

FactRef = Fact | tuple[str, str] | tuple[str, Fact]


def check_files(
    files: Mapping[str, bytes], facts: Sequence[FactRef], required: Sequence[str]
) -> list[str]:
    named = [f[0] for f in facts if isinstance(f, tuple)]
    wanted = list(dict.fromkeys([*required, *named]))  # keep order, drop repeats
    problems: list[str] = []
    texts: dict[str, str] = {}
    for name in wanted:
        if name not in files:
            problems.append(f"{name}: missing (the task refers to it but the workspace lacks it)")
            continue
        try:
            texts[name] = read_file_text(name, files[name])
        except FileReadError as e:
            problems.append(str(e))
    for ref in facts:
        if isinstance(ref, Fact):
            opened = [n for n in required if n in texts]
            if opened and not any(quotes(texts[n], ref) for n in opened):
                problems.append(f"{', '.join(opened)}: none states fact {ref.key} = {_shown(ref)}")
            continue
        name, want = ref
        if name not in texts:
            continue  # already reported as missing or unreadable
        if isinstance(want, Fact):
            if not quotes(texts[name], want):
                problems.append(f"{name}: does not state fact {want.key} = {_shown(want)}")
        elif _norm(want) not in _norm(texts[name]):
            problems.append(f"{name}: does not contain {want!r}")
    return problems


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip().casefold()


def _shown(f: Fact) -> str:
    return f"{f.value!r}" + (f" ({f.kind})" if f.kind != "text" else "")
