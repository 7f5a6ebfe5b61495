"""A corpus of model replies in each family's published format, and its scoring: every
reply decoded on every screen size through the family's model profile, counted as exact,
a refused valid reply, a silent misparse (an action other than the one meant, or one where
a refusal was due) or a refusal with the wrong reason.

A family file (``tests/formats_corpus/<family>.yaml``) names its ``profile``, the image its
model sees on each ``screen`` (``[w, h]`` pixels, or ``grid1000`` / ``grid999`` / ``unit``
for relative conventions: the published resize written out, not computed by guiforge),
and ``cases``. A case has ``domain``, ``reply`` (text, or ``{content, reasoning,
tool_calls: [{name, arguments}]}``) whose ``{x1}``, ``{y1}``, ``{x2}``, ``{y2}`` are filled
per screen from ``points`` (fractions of the screen) in the model's convention, and
``expect`` (canonical fields; points are the case's unless ``expect.points`` says where
they land) or ``refuse`` (a part of the error the model is told).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from guiforge.envs.actions import GRID, Action, to_pixels
from guiforge.envs.kinds import facts_of
from guiforge.harness.formats import ModelReply, ParseError, ToolCall, coord_system, get_format
from guiforge.models.config import ModelConfig

SCREENS = {  # the screen sizes guiforge draws (presentation.VIEWPORTS) and phones' device pixels
    "web": ((1280, 720), (1366, 768), (1536, 864), (1920, 1080)),
    "desktop": ((1280, 720), (1366, 768), (1920, 1080)),
    "mobile": ((412, 839), (360, 760), (1082, 2202)),
    "tools": ((0, 0),),
}
OUTCOMES = ("exact", "refused_valid", "silent_misparse", "refused", "wrong_refusal")


@dataclass
class Case:
    family: str
    id: str
    domain: str
    reply: Any
    points: list[list[float]] = field(default_factory=list)
    expect: dict[str, Any] | None = None
    refuse: str | None = None
    thought: str | None = None
    variant: str | None = None
    source: str = ""


@dataclass
class Family:
    name: str
    profile: str
    screens: dict[str, Any]
    cases: list[Case]
    model: str | None = None
    source: str = ""

    def config(self) -> ModelConfig:
        return ModelConfig(model_profile=self.profile, model=self.model)


def load_family(path: Path) -> Family:
    doc = yaml.safe_load(path.read_text())
    name = path.stem
    cases = [Case(family=name, **c) for c in doc["cases"]]
    seen = Counter(c.id for c in cases)
    dupes = [k for k, n in seen.items() if n > 1]
    if dupes:
        raise ValueError(f"{path}: case ids {dupes} appear twice")
    return Family(name, doc["profile"], doc["screens"], cases, doc.get("model"), doc.get("source", ""))


def load_corpus(folder: Path) -> list[Family]:
    return [load_family(p) for p in sorted(folder.glob("*.yaml"))]


def model_point(f: float, axis: int, seen: Any) -> float | int:
    """A fraction of the screen in the model's convention, as the family writes it."""
    if seen == "unit":
        return round(f, 4)
    if seen in ("grid1000", "grid999"):
        return round(f * (1000 if seen == "grid1000" else GRID))
    return round(f * (seen[axis] - 1))


def _fill(value: Any, names: dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("{") and value.endswith("}") and value[1:-1] in names:
        return names[value[1:-1]]  # a placeholder standing alone is the number itself
    if isinstance(value, str):
        for key, v in names.items():
            value = value.replace("{" + key + "}", str(v))
        return value
    if isinstance(value, list):
        return [_fill(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, names) for k, v in value.items()}
    return value


def reply_for(case: Case, seen: Any) -> ModelReply:
    names: dict[str, Any] = {}
    for i, (fx, fy) in enumerate(case.points, start=1):
        names[f"x{i}"], names[f"y{i}"] = model_point(fx, 0, seen), model_point(fy, 1, seen)
    reply = _fill(case.reply, names)
    if isinstance(reply, str):
        return ModelReply(reply)
    calls = []
    for i, c in enumerate(reply.get("tool_calls") or []):
        arguments = c.get("arguments")
        if c.get("as_json"):  # an OpenAI-compatible wire sends the arguments as a JSON string
            arguments = json.dumps(arguments)
        calls.append(ToolCall(c["name"], arguments, f"call_{i}"))
    return ModelReply(reply.get("content") or "", calls, reply.get("reasoning"))


def seen_for(family: Family, screen: tuple[int, int]) -> Any:
    key = f"{screen[0]}x{screen[1]}"
    if key in family.screens:
        return family.screens[key]
    if "all" in family.screens:
        return family.screens["all"]
    raise KeyError(f"{family.name}: no image size written for the {key} screen")


@dataclass
class Outcome:
    family: str
    case: str
    screen: str
    kind: str
    detail: str = ""


def _tolerance(frame: tuple[int, int], seen: Any) -> float:
    """How far apart, in frame pixels, the meant point and the decoded one may be: the
    rounding of the model's own value (half a pixel of the image it saw, half a step of
    its grid), of the canonical 0-999 grid (half a step) and of the frame's pixel (half)."""
    extent = max(frame) - 1
    if isinstance(seen, list):
        model_step = max((frame[0] - 1) / max(seen[0] - 1, 1), (frame[1] - 1) / max(seen[1] - 1, 1))
    else:
        model_step = extent / {"grid1000": 1000, "grid999": GRID}.get(seen, 10_000)
    return 0.5 * model_step + 0.5 * extent / GRID + 0.5


def judge(family: Family, case: Case, screen: tuple[int, int]) -> Outcome:
    """Decode one case on one screen and say how it went."""
    cfg = family.config()
    codec = get_format(cfg.action_format, tool_version=cfg.tool_version)
    seen = seen_for(family, screen) if screen != (0, 0) else "grid999"
    frame = screen if screen != (0, 0) else None
    kind = cfg.coords or codec.default_coords
    if frame is None and kind in ("pixels", "resized"):
        kind = "grid999"
    coords = coord_system(kind, frame, min_pixels=cfg.min_pixels, max_pixels=cfg.max_pixels,
                          factor=cfg.resize_factor, resize=cfg.image_resize, max_edge=cfg.max_edge)
    label = f"{screen[0]}x{screen[1]}"
    reply = reply_for(case, seen)
    variant = case.variant or facts_of(case.domain).default_variant
    try:
        thought, action = codec.parse(reply, case.domain, variant, coords)
    except ParseError as exc:
        if case.refuse is not None:
            ok = case.refuse.lower() in str(exc).lower()
            return Outcome(family.name, case.id, label, "refused" if ok else "wrong_refusal", str(exc))
        return Outcome(family.name, case.id, label, "refused_valid", str(exc))
    if case.refuse is not None:
        return Outcome(family.name, case.id, label, "silent_misparse", f"decoded {action.model_dump(exclude_none=True)}")
    problem = mismatch(case, action, screen, seen)
    if problem is None and case.thought is not None and thought != case.thought:
        problem = f"thought {thought!r}, meant {case.thought!r}"
    return Outcome(family.name, case.id, label, "silent_misparse" if problem else "exact", problem or "")


def mismatch(case: Case, action: Action, screen: tuple[int, int], seen: Any) -> str | None:
    """What differs between the decoded action and the one the reply meant, or None."""
    expect = dict(case.expect or {})
    points = expect.pop("points", case.points)
    grid = expect.pop("grid", None)  # where on the grid the points land, when guiforge places them
    got = action.model_dump(exclude_none=True)
    want_fields = dict(expect)
    got_points = [(got.pop(xk), got.pop(yk)) for xk, yk in (("x", "y"), ("x2", "y2")) if xk in got]
    if got != want_fields:
        return f"decoded {got}, meant {want_fields}"
    if grid is not None:
        far = [(g, w) for g, w in zip(got_points, grid, strict=False) if max(abs(g[0] - w[0]), abs(g[1] - w[1])) > 1]
        return f"grid points {got_points}, meant {grid}" if far or len(got_points) != len(grid) else None
    if len(got_points) != len(points if _pointed(action) else []):
        return f"decoded {len(got_points)} point(s), meant {len(points)}"
    w, h = screen
    tol = _tolerance(screen, seen)
    for (gx, gy), (fx, fy) in zip(got_points, points, strict=False):
        px, py = to_pixels(gx, gy, w, h)
        mx, my = fx * (w - 1), fy * (h - 1)
        if abs(px - mx) > tol or abs(py - my) > tol:
            return f"point ({px}, {py}) px, meant ({mx:.1f}, {my:.1f}) px (tolerance {tol:.2f})"
    return None


def _pointed(action: Action) -> bool:
    return action.x is not None


def run_corpus(families: list[Family]) -> list[Outcome]:
    out = []
    for family in families:
        for case in family.cases:
            for screen in SCREENS[case.domain]:
                out.append(judge(family, case, screen))
    return out


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    """Counts per family and screen, and the shares the corpus is held to: exact over the
    valid replies, and silent misparses over all."""
    by: dict[str, Counter] = {}
    for o in outcomes:
        by.setdefault(f"{o.family}@{o.screen}", Counter())[o.kind] += 1
        by.setdefault(o.family, Counter())[o.kind] += 1
    out = {}
    for key, counts in sorted(by.items()):
        valid = counts["exact"] + counts["refused_valid"] + counts["silent_misparse"]
        out[key] = {**{k: counts[k] for k in OUTCOMES}, "exact_share": round(counts["exact"] / valid, 4) if valid else None}
    return out
