"""The structured parts of a world's documents, built from a scenario: sections of text
documents (headings, paragraphs, bullets, tables, callouts) and slides with layouts, charts
and pictures. Used by the template builder; every string is a template in the document's
context, and every list element may repeat (``each``) or be conditional (``when``)."""

from __future__ import annotations

from typing import Any

from guiforge.worlds.dsl import ChartSpec, SectionSpec, SlideSpec, TableSpec, TextItem, TextList
from guiforge.worlds.model import Chart, ChartSeries, DocTable, Section, Slide, SlideImage
from guiforge.worlds.runtime import Run
from guiforge.yamlfile import PathKey


def texts(run: Run, items: TextList, path: PathKey, ctx: dict[str, Any]) -> list[str]:
    out = []
    for k, it in enumerate(items):
        if isinstance(it, TextItem):
            out += [run.text(it.text, (*path, k, "text"), c) for c in run.expand(it, (*path, k), ctx)]
        else:
            out.append(run.text(it, (*path, k), ctx))
    return out


def build_sections(
    run: Run, specs: list[SectionSpec], path: PathKey, ctx: dict[str, Any]
) -> list[Section]:
    out = []
    for k, spec in enumerate(specs):
        p = (*path, k)
        for sctx in run.expand(spec, p, ctx):
            out.append(
                Section(
                    heading=run.text(spec.heading, (*p, "heading"), sctx),
                    level=spec.level,
                    paragraphs=texts(run, spec.paragraphs, (*p, "paragraphs"), sctx),
                    bullets=texts(run, spec.bullets, (*p, "bullets"), sctx),
                    table=_table(run, spec.table, (*p, "table"), sctx) if spec.table else None,
                    style=spec.style,
                )
            )
    return out


def _table(run: Run, spec: TableSpec, path: PathKey, ctx: dict[str, Any]) -> DocTable:
    rows: list[list[str]] = []
    for j, row in enumerate(spec.rows):
        p = (*path, "rows", j)
        for rctx in run.expand(row, p, ctx):
            cells = [run.text(str(c), (*p, "cells", n), rctx) if c is not None else ""
                     for n, c in enumerate(row.cells)]  # fmt: skip
            if len(cells) != len(spec.columns):
                raise run.error(p, f"{len(cells)} cells for {len(spec.columns)} columns")
            rows.append(cells)
    columns = [run.text(c, (*path, "columns", n), ctx) for n, c in enumerate(spec.columns)]
    return DocTable(columns=columns, rows=rows, caption=run.text(spec.caption, (*path, "caption"), ctx))


def build_slides(run: Run, specs: list[SlideSpec], path: PathKey, ctx: dict[str, Any]) -> list[Slide]:
    out = []
    for k, s in enumerate(specs):
        p = (*path, k)
        for sctx in run.expand(s, p, ctx):
            image = None
            if s.image is not None:
                ip = (*p, "image")
                image = SlideImage(kind=s.image.kind, subject=run.text(s.image.subject, (*ip, "subject"), sctx),
                                   caption=run.text(s.image.caption, (*ip, "caption"), sctx))  # fmt: skip
            try:
                slide = Slide(
                    title=run.text(s.title, (*p, "title"), sctx),
                    bullets=texts(run, s.bullets, (*p, "bullets"), sctx),
                    notes=run.text(s.notes, (*p, "notes"), sctx),
                    layout=s.layout,
                    right_bullets=texts(run, s.right_bullets, (*p, "right_bullets"), sctx),
                    left_heading=run.text(s.left_heading, (*p, "left_heading"), sctx),
                    right_heading=run.text(s.right_heading, (*p, "right_heading"), sctx),
                    chart=_chart(run, s.chart, (*p, "chart"), sctx) if s.chart else None,
                    image=image,
                )
            except ValueError as e:
                raise run.error(p, f"invalid slide: {str(e).splitlines()[-1].strip()}") from None
            out.append(slide)
    return out


def _chart(run: Run, spec: ChartSpec, path: PathKey, ctx: dict[str, Any]) -> Chart:
    categories = [str(c) for c in _list(run, spec.categories, (*path, "categories"), ctx)]
    series = []
    for n, s in enumerate(spec.series):
        p = (*path, "series", n)
        values = [run.number(v, (*p, "values"), ctx) for v in _list(run, s.values, (*p, "values"), ctx)]
        series.append(ChartSeries(name=run.text(s.name, (*p, "name"), ctx), values=values))
    try:
        return Chart(kind=spec.kind, categories=categories, series=series,
                     number_format=spec.number_format)  # fmt: skip
    except ValueError as e:
        raise run.error(path, f"invalid chart: {str(e).splitlines()[-1].strip()}") from None


def _list(run: Run, src: list[Any] | str, path: PathKey, ctx: dict[str, Any]) -> list[Any]:
    """A literal list (each element a template or a value) or a template giving a list."""
    if isinstance(src, str):
        got = run.native(src, path, ctx)
        if isinstance(got, str) or not hasattr(got, "__iter__"):
            raise run.error(path, f"{src!r} must give a list, not {type(got).__name__}")
        return list(got)
    return [run.native(v, (*path, n), ctx) for n, v in enumerate(src)]
