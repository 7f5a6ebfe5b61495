"""Coordinate conventions for exported actions: from the lake's 0-999 grid to what a
student model writes, and back (the RL reward replays a completion written in the export's
convention).

One small module on purpose: the formats work (guiforge/harness/formats/) brings the
project-wide coordinate conventions; switching this module to those is a local change.

- ``grid999``: the lake's own integers in [0, 999] (MintAct's grid), unchanged.
- ``grid1000``: integers in [0, 1000], thousandths of the frame (Qwen-VL / UI-TARS style).
- ``pixels``: integer pixels of the screenshot the policy saw (the harness's pixel centre).
- ``unit``: fractions of the frame in [0, 1], four decimals.

Every conversion lands within one pixel of the harness's own pixel point
(``guiforge.envs.actions.to_pixels``) for frames up to 2000 pixels a side.
"""

from __future__ import annotations

from typing import Any, Literal

from guiforge.envs.actions import GRID, to_grid, to_pixels

Convention = Literal["grid999", "grid1000", "pixels", "unit"]
CONVENTIONS: tuple[str, ...] = ("grid999", "grid1000", "pixels", "unit")
POINTS = (("x", "y"), ("x2", "y2"))

# The sentence the domain's system prompt carries about coordinates, per convention.
_GRID_LINE = ("Screen coordinates are integers on a 0-999 grid: (0, 0) is the top-left corner and "
              "(999, 999) the bottom-right, whatever the screenshot's pixel size.")
PROMPT_LINES: dict[str, str] = {
    "grid999": _GRID_LINE,
    "grid1000": ("Screen coordinates are integers on a 0-1000 grid (thousandths of the screenshot): (0, 0) is "
                 "the top-left corner and (1000, 1000) the bottom-right, whatever the screenshot's pixel size."),
    "pixels": ("Screen coordinates are integer pixels of the screenshot: (0, 0) is the top-left corner and "
               "(width-1, height-1) the bottom-right."),
    "unit": ("Screen coordinates are fractions of the screenshot in [0, 1]: (0, 0) is the top-left corner and "
             "(1, 1) the bottom-right."),
}


def check_convention(name: str) -> str:
    if name not in CONVENTIONS:
        raise ValueError(f"coordinate convention {name!r} is not one of {', '.join(CONVENTIONS)}")
    return name


def _encode(g: int, size: int, convention: str) -> int | float:
    if convention == "grid999":
        return g
    px = to_pixels(g, 0, size, 1)[0]
    if convention == "pixels":
        return px
    if convention == "grid1000":
        return min(max(round(px * 1000 / size), 0), 1000)
    return round(px / size, 4)  # unit


def _decode_px(v: float, size: int, convention: str) -> float:
    if convention == "pixels":
        return v
    if convention == "grid1000":
        return v * size / 1000
    return v * size  # unit


def encode_action(action: dict[str, Any], width: int | None, height: int | None, convention: str) -> dict[str, Any]:
    """A canonical action (grid999, None fields dropped) with its points in ``convention``.
    Actions without points, or frames of unknown size, pass unchanged."""
    out = {k: v for k, v in action.items() if v is not None}
    if convention == "grid999" or not width or not height:
        return out
    for kx, ky in POINTS:
        if out.get(kx) is not None and out.get(ky) is not None:
            out[kx] = _encode(out[kx], width, convention)
            out[ky] = _encode(out[ky], height, convention)
    return out


def decode_action(action: dict[str, Any], width: int, height: int, convention: str) -> dict[str, Any]:
    """The inverse of :func:`encode_action`: points written in ``convention`` back on the
    0-999 grid (what the environments step). A point outside the convention is an error."""
    out = dict(action)
    if convention == "grid999":
        return out
    for kx, ky in POINTS:
        if out.get(kx) is None or out.get(ky) is None:
            continue
        x, y = float(out[kx]), float(out[ky])
        limit = {"pixels": (width - 1, height - 1), "grid1000": (1000, 1000), "unit": (1, 1)}[convention]
        if not (0 <= x <= limit[0] and 0 <= y <= limit[1]):
            raise ValueError(f"point ({out[kx]}, {out[ky]}) is outside the {convention} range "
                             f"0..{limit[0]} x 0..{limit[1]}")
        out[kx], out[ky] = to_grid(_decode_px(x, width, convention), _decode_px(y, height, convention),
                                   width, height)
    return out


def pixel_point(action: dict[str, Any], width: int, height: int, convention: str) -> tuple[float, float]:
    """Where a point written in ``convention`` lands in pixels (for checks and tests)."""
    x, y = float(action["x"]), float(action["y"])
    if convention == "grid999":
        return to_pixels(int(x), int(y), width, height)
    return _decode_px(x, width, convention), _decode_px(y, height, convention)


__all__ = ["CONVENTIONS", "GRID", "PROMPT_LINES", "check_convention", "decode_action", "encode_action",
           "pixel_point"]
