"""Realism figures for worlds: how dense each world is (contacts, mail threads, calendar
months, payments, categories, sheet rows), which coherence rules worlds broke, whether mail
reads as templates, whether people fit what they write and pay fits the occupation. For
``guiforge stats --realism`` and the report: ``world_density(world)`` is one world's row,
``realism_rows(lake)`` the per-metric summary of a lake's worlds plus one row per failed
rule (from the worlds stage's exclusions) and the structure of their documents and decks."""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from collections.abc import Iterable
from typing import Any

from guiforge.worlds.model import World
from guiforge.worlds.reuse import body_reuse, relationship_violations
from guiforge.worlds.wages import experience, wage_table

# what the default run's worlds should reach on average (issue 16)
TARGETS = {"contacts": 40, "emails": 150, "transactions": 100, "events": 30,
           "max_sheet_rows": 20, "sheets_per_workbook": 2}
_RE = re.compile(r"^(re|fwd?|aw|wg|tr|sv):\s*", re.IGNORECASE)


def world_density(w: World) -> dict[str, Any]:
    """One world's counts: what an agent has to search, scroll and tell apart."""
    threads = {_RE.sub("", e.subject).strip().lower() for e in w.emails}
    senders = Counter(e.sender for e in w.emails if e.folder == "inbox")
    days = sorted(e.start.date() for e in w.events)
    rows = [len(s.rows) for d in w.documents for s in d.sheets]
    workbooks = [d for d in w.documents if d.sheets]
    return {
        "world_id": w.world_id, "scenario": w.scenario, "city": w.me.city, "country": w.me.country,
        "contacts": len(w.contacts), "organizations": len({c.organization for c in w.contacts if c.organization}),
        "emails": len(w.emails), "threads": len(threads),
        "inbox_senders": len(senders), "busiest_sender_emails": max(senders.values(), default=0),
        "events": len(w.events), "calendar_days": (days[-1] - days[0]).days + 1 if days else 0,
        "transactions": len(w.transactions),
        "categories": len({t.category for t in w.transactions if t.category}),
        "payees": len({t.payee for t in w.transactions}),
        "documents": len(w.documents), "workbooks": len(workbooks), "sheets": len(rows),
        "sheets_per_workbook": round(len(rows) / len(workbooks), 2) if workbooks else 0,
        "mean_sheet_rows": round(statistics.fmean(rows), 1) if rows else 0, "max_sheet_rows": max(rows, default=0),
        "chats": len(w.chats), "notes": len(w.notes),
    }  # fmt: skip


def density_summary(worlds: Iterable[World]) -> list[dict[str, Any]]:
    """Per metric: mean, min, max over the worlds, and the target where one is set."""
    rows = [world_density(w) for w in worlds]
    if not rows:
        return []
    out = []
    for key, value in rows[0].items():
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        vals = [r[key] for r in rows]
        out.append({"metric": key, "worlds": len(vals), "mean": round(statistics.fmean(vals), 1),
                    "min": min(vals), "max": max(vals), "target": TARGETS.get(key),
                    "meets_target": None if key not in TARGETS else statistics.fmean(vals) >= TARGETS[key]})  # fmt: skip
    return out


def document_structure(w: World) -> dict[str, Any]:
    """One world's document structure: sections and tables of its text documents, slides,
    layouts, charts and pictures of its decks (issue 16: documents and decks a person would
    really have)."""
    texts = [d for d in w.documents if d.kind == "text"]
    decks = [d for d in w.documents if d.slides]
    slides = [s for d in decks for s in d.slides]
    return {
        "text_documents": len(texts),
        "sections": sum(len(d.sections) for d in texts),
        "structured_text_documents": sum(1 for d in texts if d.sections),
        "section_tables": sum(1 for d in texts for s in d.sections if s.table is not None),
        "text_lines": sum(len(d.text_lines()) for d in texts),
        "decks": len(decks), "slides": len(slides),
        "charts": sum(1 for s in slides if s.chart is not None),
        "pictures": sum(1 for s in slides if s.image is not None),
        "layouts": Counter(s.layout or ("title" if d.slides[0] is s else "content")
                           for d in decks for s in d.slides),
    }  # fmt: skip


def document_summary(worlds: Iterable[World]) -> dict[str, Any]:
    """Over the worlds: per text document and per deck averages, and how often each layout
    is used."""
    rows = [document_structure(w) for w in worlds]
    total = {k: sum(r[k] for r in rows) for k in rows[0] if k != "layouts"} if rows else {}
    layouts: Counter[str] = Counter()
    for r in rows:
        layouts.update(r["layouts"])
    per = lambda a, b: round(total.get(a, 0) / total[b], 2) if total.get(b) else 0.0  # noqa: E731
    return {
        "worlds": len(rows), **total,
        "sections_per_text_document": per("sections", "text_documents"),
        "tables_per_text_document": per("section_tables", "text_documents"),
        "lines_per_text_document": per("text_lines", "text_documents"),
        "slides_per_deck": per("slides", "decks"),
        "layouts_used": dict(layouts.most_common()),
    }  # fmt: skip


def monthly_pay(w: World) -> float | None:
    """What the persona's work paid into the account per month (salary, or a freelancer's
    client payments), over the months the account shows."""
    pay = [t for t in w.transactions if t.transaction_id.startswith("bg_")
           and (t.category == "Salary" or t.memo == "Client payment")]  # fmt: skip
    months = {t.booked_on.strftime("%Y-%m") for t in pay}
    return round(sum(t.amount for t in pay) / len(months), 2) if months else None


def pay_order(worlds: Iterable[World], margin: float = 1.2) -> dict[str, Any]:
    """Pay against the wage table: per country, the pairs of worlds whose occupations the table
    sets ``margin`` times apart (in that country) but whose pay, for the same years of work,
    runs the other way (0: pay follows occupation)."""
    table = wage_table()
    rows = [(w.me.country_code, w.me.occupation, pay / experience(w.me.age))
            for w in worlds if (pay := monthly_pay(w)) is not None]  # fmt: skip
    inversions, pairs, example = 0, 0, ""
    for i, (ca, oa, pa) in enumerate(rows):
        for cb, ob, pb in rows[i + 1:]:
            if ca != cb:
                continue
            ra, rb = (table.ratio(o) ** table.spread(ca) for o in (oa, ob))
            if max(ra, rb) < margin * min(ra, rb):
                continue
            pairs += 1
            if (ra > rb) != (pa > pb):
                inversions += 1
                example = example or f"{ca}: {oa} {pa:.0f} vs {ob} {pb:.0f} a month, for the same years of work"
    return {"worlds": len(rows), "pairs": pairs, "inversions": inversions, "example": example}


def rule_failures(exclusions: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Coherence and consistency rules that excluded worlds, most frequent first."""
    counts: Counter[str] = Counter()
    example: dict[str, str] = {}
    for row in exclusions:
        if row.get("subject_table") != "worlds":
            continue
        try:
            details = json.loads(row.get("details_json") or "{}")
        except ValueError:
            details = {}
        rules = details.get("rules") or [row.get("gate") or "unknown"]
        for r in rules:
            counts[r] += 1
            example.setdefault(r, str(row.get("reason", ""))[:200])
    return [{"rule": r, "worlds": n, "example": example[r]} for r, n in counts.most_common()]


def realism_rows(lake_root: str, run_id: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """``{"density": [...], "rule_failures": [...]}`` for the worlds of a lake (a path or
    fsspec URI), read through DuckDB like ``guiforge stats``."""
    # heavy: duckdb, numpy, imported when this runs
    from guiforge.catalog import _quote, connect, table_source
    from guiforge.lake.store import Lake

    lake = Lake(lake_root)
    where = f" WHERE run_id = {_quote(run_id)}" if run_id else ""
    con = connect(lake)
    try:
        worlds, excl = [], []
        if src := table_source(lake, "worlds"):
            worlds = [World.model_validate_json(r[0])
                      for r in con.execute(f"SELECT world_json FROM {src}{where}").fetchall()]  # fmt: skip
        if src := table_source(lake, "exclusions"):
            cur = con.execute(f"SELECT subject_table, gate, reason, details_json FROM {src}{where}")
            names = [d[0] for d in cur.description]
            excl = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    finally:
        con.close()
    return {"density": density_summary(worlds), "rule_failures": rule_failures(excl),
            "documents": document_summary(worlds), **life_realism(worlds)}  # fmt: skip


def life_realism(worlds: list[World]) -> dict[str, Any]:
    """Everyday life: e-mail bodies shared across worlds, people who do not fit what they
    write, pay against occupation."""
    violations = [v for w in worlds for v in relationship_violations(w)]
    return {"mail": body_reuse(worlds), "pay": pay_order(worlds),
            "relationships": {"violations": len(violations), "examples": violations[:5]}}
