"""Coordinate conventions: how a model writes a point, converted exactly to and from the
canonical 0-999 grid.

Every convention is a linear scale of the frame: a model value ``a`` in ``[0, extent]``
means the point ``a / extent`` of the way across, as does grid value ``g / 999``.

- ``grid999``: ours, integers 0-999.
- ``grid1000``: integers 0-1000 (Qwen2-VL, UI-TARS 1.0, Qwen3-VL).
- ``unit``: floats 0-1 (Aguvis, Smol2Operator, pyautogui-style normalised calls).
- ``pixels``: integer pixels of the image the model saw: the frame as captured, or the
  frame as guiforge sized it before sending (``resize: fit``, Anthropic's documented
  limits; see :mod:`guiforge.models.images`), so Claude's pixels on a 1920x1080 screen are
  read in the 1430x804 image it was shown.
- ``resized``: integer pixels of the image the model saw after Qwen2.5-VL's smart resize
  (sides rounded to multiples of ``factor``, area kept within min/max pixels), which is
  what Qwen2.5-VL and UI-TARS 1.5 answer in, whether the server's processor resized the
  frame or guiforge sent it at that size.

A value outside the convention's range is an error for the model to fix, never clamped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from guiforge.envs.actions import GRID
from guiforge.models.images import (
    QWEN_FACTOR,
    QWEN_MAX_PIXELS,
    QWEN_MIN_PIXELS,
    ImageSizing,
    smart_resize,
)

CoordKind = Literal["grid999", "grid1000", "unit", "pixels", "resized"]
COORD_KINDS: tuple[str, ...] = ("grid999", "grid1000", "unit", "pixels", "resized")


class CoordError(ValueError):
    """A coordinate the declared convention does not allow."""


@dataclass(frozen=True)
class CoordSystem:
    """One convention on one frame: ``to_model`` and ``from_model`` convert a point."""

    kind: str = "grid999"
    width: int = 0  # the frame as captured, in pixels
    height: int = 0
    min_pixels: int = QWEN_MIN_PIXELS
    max_pixels: int = QWEN_MAX_PIXELS
    factor: int = QWEN_FACTOR
    # pixels: how guiforge sized the image before sending it ("none": as captured)
    resize: str = "none"
    max_edge: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in COORD_KINDS:
            raise ValueError(f"unknown coordinate convention {self.kind!r}; use one of {', '.join(COORD_KINDS)}")

    @property
    def space(self) -> tuple[int, int] | None:
        """The (width, height) of the image the model's pixels refer to, for pixel kinds."""
        if self.kind in ("pixels", "resized") and (self.width <= 0 or self.height <= 0):
            raise CoordError(f"{self.kind} coordinates need a screenshot, and this observation has none")
        if self.kind == "pixels":
            return self.sizing().size(self.width, self.height)
        if self.kind == "resized":
            h, w = smart_resize(self.height, self.width, self.factor, self.min_pixels, self.max_pixels)
            return w, h
        return None

    def sizing(self) -> ImageSizing:
        """How the image the model saw was sized from the frame."""
        return ImageSizing(self.resize, self.max_edge, self.max_pixels, self.min_pixels, self.factor)

    def extent(self, axis: int) -> float:
        """The largest value on ``axis`` (0: x, 1: y)."""
        if self.kind == "grid999":
            return GRID
        if self.kind == "grid1000":
            return 1000
        if self.kind == "unit":
            return 1.0
        return self.space[axis] - 1  # type: ignore[index]

    @property
    def integral(self) -> bool:
        return self.kind != "unit"

    def describe(self) -> str:
        """One sentence for a prompt: what a coordinate means."""
        if self.kind == "grid999":
            return ("Screen coordinates are integers on a 0-999 grid: (0, 0) is the top-left corner and (999, 999) "
                    "the bottom-right, whatever the screenshot's pixel size.")
        if self.kind == "grid1000":
            return "Coordinates are integers from 0 to 1000, relative to the screenshot's width and height."
        if self.kind == "unit":
            return "Coordinates are fractions from 0.0 to 1.0 of the screenshot's width and height."
        w, h = self.space  # type: ignore[misc]
        return f"Coordinates are pixels of the {w}x{h} screenshot: x from 0 to {w - 1}, y from 0 to {h - 1}."

    def to_model(self, gx: int, gy: int) -> tuple[float, float] | tuple[int, int]:
        """A grid point as the model writes it."""
        out = []
        for axis, g in enumerate((gx, gy)):
            value = g * self.extent(axis) / GRID
            out.append(round(value) if self.integral else round(value, 6))
        return tuple(out)  # type: ignore[return-value]

    def from_model(self, x: object, y: object, names: tuple[str, str] = ("x", "y")) -> tuple[int, int]:
        """The grid point of a model's (x, y); raises CoordError outside the convention."""
        out = []
        for axis, (value, name) in enumerate(zip((x, y), names, strict=True)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise CoordError(f"{name}={value!r} is not a number")
            extent = self.extent(axis)
            if self.integral and value != int(value):
                raise CoordError(f"{name}={value} is not an integer ({self.describe()})")
            if not 0 <= value <= extent:
                raise CoordError(f"{name}={value} is outside the {self.kind} range 0-{_num(extent)}: "
                                 f"must be greater than or equal to 0 and less than or equal to {_num(extent)}")
            out.append(round(value * GRID / extent) if extent else 0)
        return out[0], out[1]

    def tolerance_px(self) -> float:
        """How far apart, in frame pixels, two points the model cannot tell apart may be:
        one pixel, or one pixel of the image the model saw where it is coarser than the frame."""
        space = self.space
        if space and space != (self.width, self.height):
            return max(1.0, (self.width - 1) / max(space[0] - 1, 1), (self.height - 1) / max(space[1] - 1, 1))
        return 1.0


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def coord_system(kind: str | CoordSystem | None = None, frame: tuple[int, int] | None = None,
                 min_pixels: int | None = None, max_pixels: int | None = None,
                 factor: int | None = None, resize: str | None = None, max_edge: int | None = None) -> CoordSystem:
    """A :class:`CoordSystem` from a name and the frame's (width, height); ``resize`` and
    ``max_edge`` (with ``max_pixels``) say how a ``pixels`` model's images were sized."""
    if isinstance(kind, CoordSystem):
        return kind
    w, h = frame or (0, 0)
    fit = resize == "fit"
    return CoordSystem(kind or "grid999", w, h, min_pixels or QWEN_MIN_PIXELS,
                       (max_pixels or QWEN_MAX_PIXELS) if not fit else (max_pixels or 0),
                       factor or QWEN_FACTOR, resize or "none", max_edge)
