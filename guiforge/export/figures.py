"""What an export holds, as figures (the ``exports`` row's details, the card, ``guiforge
stats --realism``): distinct tasks, rows with a screenshot, duplicate (screenshot, target)
rows, rows per split, and the token cost of the screenshots under common processors."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from guiforge.export.budget import PROCESSORS


def _target(row) -> str:
    return "".join(p.get("text") or "" for p in row.messages[-1]["content"] if p["type"] == "text")


def export_figures(sft: list, rl: list) -> dict[str, Any]:
    """Figures of the rows an export writes (ExportRow)."""
    n = len(sft)
    pairs = Counter((r.columns["image_sha256"][-1], _target(r)) for r in sft if r.columns.get("image_sha256"))
    duplicates = sum(c - 1 for c in pairs.values())
    with_image = sum(bool(r.images) for r in sft)
    splits: dict[str, dict[str, Any]] = {}
    for kind, rows in (("sft", sft), ("rl", rl)):
        for r in rows:
            s = splits.setdefault(r.split, {"sft_rows": 0, "rl_rows": 0, "tasks": set(), "worlds": set()})
            s[f"{kind}_rows"] += 1
            s["tasks"].add(r.columns.get("task_id"))
            s["worlds"].add(r.columns.get("world_id"))
    tokens = [r.columns["est_tokens"] for r in sft if r.columns.get("est_tokens") is not None]
    return {
        "sft_rows": n, "sft_tasks": len({r.columns.get("task_id") for r in sft}),
        "sft_trajectories": len({r.columns.get("trajectory_id") for r in sft}),
        "sft_rows_with_image_share": round(with_image / n, 4) if n else None,
        "duplicate_image_target_rows": duplicates,
        "duplicate_image_target_share": round(duplicates / n, 4) if n else None,
        "images_per_row_max": max((len(r.images) for r in sft), default=0),
        "est_tokens_max": max(tokens, default=None), "est_tokens_mean": round(sum(tokens) / len(tokens)) if tokens else None,
        "splits": {k: {"sft_rows": v["sft_rows"], "rl_rows": v["rl_rows"], "tasks": len(v["tasks"]),
                       "worlds": len(v["worlds"])} for k, v in sorted(splits.items())},
    }


def screen_figures(sft: list, tasks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """How the exported screenshots look, per domain: the share of rows with a screenshot
    whose screen shows a browser around the app, a phone's status and navigation bars, a
    terminal window, a theme, a palette past light and dark (the task's recorded presentation)."""
    out: dict[str, dict[str, Any]] = {}
    for r in sft:
        if not r.images:
            continue
        task = tasks.get(r.columns.get("task_id")) or {}
        try:
            pres = json.loads(task.get("presentation_json") or "{}") or {}
        except ValueError:
            pres = {}
        d = out.setdefault(task.get("domain") or "?", Counter())
        d["rows"] += 1
        theme = pres.get("theme") or {}
        d["browser"] += bool(pres.get("browser"))
        d["phone_bars"] += bool(pres.get("phone"))
        d["terminal"] += bool(pres.get("terminal"))
        d["themed"] += bool(theme)
        d["dark"] += theme.get("mode") == "dark"
        d["palette"] += bool(theme.get("palette"))
    return {domain: {"rows": c["rows"], **{f"{k}_share": round(c[k] / c["rows"], 4)
                                           for k in ("browser", "phone_bars", "terminal", "themed", "dark", "palette")}}
            for domain, c in sorted(out.items())}


def image_token_table(sft: list, images: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per exported frame size: rows, and tokens per screenshot under each processor."""
    sizes: Counter = Counter()
    for r in sft:
        for key in r.images:
            sizes[(images[key]["width"], images[key]["height"])] += 1
    return [{"size": f"{w}x{h}", "screenshots": n, **{p.name: p.tokens(w, h) for p in PROCESSORS}}
            for (w, h), n in sizes.most_common(12)]


def export_realism(lake, run_id: str | None = None) -> dict[str, Any]:
    """``guiforge stats --realism``'s export figures: the rollout tiers (tasks and samples of
    each) and the latest SFT export's breadth, duplicates, screenshots and splits."""
    out: dict[str, Any] = {}
    tables = lake.tables()
    if "trajectories" in tables:
        t = lake.read_table("trajectories", run_id=run_id, columns=["task_id", "tier"]).to_pylist()
        tiers: dict[str, dict[str, Any]] = {}
        for r in t:
            tier = tiers.setdefault(r["tier"] or "untiered", {"tasks": set(), "samples": 0})
            tier["tasks"].add(r["task_id"])
            tier["samples"] += 1
        out["tiers"] = {k: {"tasks": len(v["tasks"]), "samples": v["samples"]} for k, v in sorted(tiers.items())}
    if "exports" in tables:
        rows = [e for e in lake.read_table("exports", run_id=run_id).to_pylist() if e["kind"] == "sft"]
        rows = [e for e in rows if e["format"] == "hf"] or rows  # hf's figures: its image configs
        if rows:
            latest = max(rows, key=lambda e: e["created_at"] or "")
            figures = (json.loads(latest["details_json"] or "{}").get("figures") or {})
            out["export"] = {"path": latest["path"], "format": latest["format"], **figures}
    return out
