"""Canonical actions: per-domain action sets and the 0-999 grid <-> pixel conversion."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from guiforge.envs.actions import GRID, Action, action_pixels, action_set, to_grid, to_pixels

SIZES = [(1280, 720), (1920, 1080), (1080, 2400), (412, 915), (2560, 1440), (800, 600), (1000, 1000)]


@pytest.mark.parametrize("width, height", SIZES)
def test_pixel_grid_pixel_is_exact_to_one_pixel(width, height):
    for px in range(width):
        gx, _ = to_grid(px, 0, width, height)
        back, _ = to_pixels(gx, 0, width, height)
        assert abs(back - px) <= 1, (px, gx, back)
    for py in range(0, height, 3):
        _, gy = to_grid(0, py, width, height)
        assert abs(to_pixels(0, gy, width, height)[1] - py) <= 1


@pytest.mark.parametrize("width, height", SIZES)
def test_grid_points_map_inside_the_frame_and_back(width, height):
    for g in range(GRID + 1):
        x, y = to_pixels(g, g, width, height)
        assert 0 <= x < width and 0 <= y < height
        if width > GRID:  # every grid point has its own pixel: grid -> pixel -> grid is exact
            assert to_grid(x, y, width, height)[0] == g


def test_action_sets_are_per_domain():
    assert "tap" in action_set("mobile") and "tap" not in action_set("web")
    assert "bash" in action_set("desktop", "terminal") and "click" not in action_set("desktop", "terminal")
    assert {"bash", "click"} <= action_set("desktop", "hybrid")
    with pytest.raises(ValueError, match="not in the web action set"):
        Action(type="tap", x=1, y=1).check_domain("web")


def test_actions_validate_their_fields():
    with pytest.raises(ValidationError, match="needs x and y"):
        Action(type="click")
    with pytest.raises(ValidationError):
        Action(type="click", x=1000, y=5)
    drag = Action(type="drag", x=0, y=0, x2=999, y2=999)
    pixels = action_pixels(drag, 1280, 720)
    assert (pixels["x"], pixels["y"], pixels["x2"], pixels["y2"]) == (0, 0, 1279, 719)
    assert set(drag.row()) == {"type", "x", "y", "x2", "y2", "text", "keys", "direction", "amount", "button",
                               "app", "status", "answer"}
