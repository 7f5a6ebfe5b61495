"""guiforge rubric checks as OSWorld evaluator metrics, where OSWorld has one.

OSWorld's evaluator names a metric ``func``, a ``result`` getter (what to read from the VM),
an ``expected`` getter and ``options``; several metrics combine with ``conj``. A rubric maps
only when every criterion is required and has a counterpart here (a partial mapping would
change what success means); otherwise the task keeps the ``guiforge_rubric`` evaluator.
"""

from __future__ import annotations

import shlex
from typing import Any

HOME = "/home/user"


def _xlsx_cell(check: dict[str, Any]) -> dict[str, Any] | None:
    if check.get("sheet") not in (None, 0):  # OSWorld addresses sheets by index; names do not map
        return None
    value = check.get("value")
    method = f"approx:{check.get('tolerance', 0.005)}" if isinstance(value, int | float) else "eq"
    rule = {"type": "check_cell", "sheet_idx": 0, "coordinate": check["cell"],
            "props": {"value": {"method": method, "ref": value}}}
    return {"func": "compare_table",
            "result": {"type": "vm_file", "path": f"{HOME}/{check['path']}", "dest": check["path"]},
            "expected": None, "options": {"rules": [rule]}}


def _file_text(check: dict[str, Any], include: bool) -> dict[str, Any] | None:
    text = check.get("text")
    texts = [text] if isinstance(text, str) else list(text or [])
    if not texts or not check.get("path"):
        return None
    rules = {"include": texts, "exclude": []} if include else {"include": [], "exclude": texts}
    return {"func": "check_include_exclude",
            "result": {"type": "vm_command_line", "command": ["bash", "-c", f"cat {shlex.quote(f'{HOME}/' + check['path'])}"]},
            "expected": {"type": "rule", "rules": rules}, "options": {}}


MAPPERS = {
    "xlsx_cell_equals": _xlsx_cell,
    "file_contains": lambda c: _file_text(c, include=True),
    "file_lacks": lambda c: _file_text(c, include=False),
}


def osworld_evaluator(rubric: list[dict[str, Any]]) -> dict[str, Any] | None:
    """OSWorld's evaluator for ``rubric``, or None when some criterion has no OSWorld metric."""
    metrics = []
    for criterion in rubric or []:
        check = criterion.get("check") or {}
        mapper = MAPPERS.get(check.get("fn"))
        metric = mapper(check) if mapper and criterion.get("required", True) else None
        if metric is None:
            return None
        metrics.append(metric)
    if not metrics:
        return None
    if len(metrics) == 1:
        return {k: v for k, v in metrics[0].items() if v is not None and v != {}}
    return {"func": [m["func"] for m in metrics], "result": [m["result"] for m in metrics],
            "expected": [m["expected"] for m in metrics], "options": [m["options"] for m in metrics],
            "conj": "and"}
