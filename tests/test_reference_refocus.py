"""The reference program after a pop-up took the focus from the field it was typing in: the
field is its target again, so a notification that came up over the field is dismissed before
the tap back into it (shop.price_to_chat on a phone failed its package gate: the tap on the
search box brought up a pop-up, then a toast over the box, and the typing found no focus)."""

from __future__ import annotations

from guiforge.envs.actions import to_grid
from guiforge.envs.base import Observation
from guiforge.teacher.reference import ReferenceProgram

SEARCH = {"id": "shop-search", "label": "Search products", "box": [475, 92, 402, 50], "grid": [625, 62]}
PRODUCT = {"id": "product-1", "label": "Universal travel adapter, €23.24", "box": [0, 300, 400, 200], "grid": [260, 275]}
DIALOG = [{"id": "gf-dialog-close", "label": "Close “Turn on notifications?”", "grid": [902, 431]},
          {"id": "gf-dialog-dismiss", "label": "Not now", "grid": [633, 580]}]
TOAST = [{"id": "gf-toast", "label": "Backup complete.", "role": "status", "grid": [500, 80]},
         {"id": "gf-toast-close", "label": "Dismiss notification", "grid": [910, 80]}]


def screen(elements: list[dict], focused: bool) -> Observation:
    focus = {"editable": True, "id": "shop-search", "label": "Search products"} if focused else {"editable": False}
    return Observation(width=1000, height=1000, debug={"elements": elements, "focus": focus, "path": "/shop"})


def test_a_toast_over_the_field_a_pop_up_unfocused_is_dismissed_before_tapping_back():
    program = ReferenceProgram([{"do": "type", "id": "shop-search", "text": "adapter"}], "mobile")
    screens = [
        screen([SEARCH, PRODUCT], focused=False),  # the tap on the search box comes first
        screen(DIALOG, focused=True),  # it focused the box, and a pop-up came up
        screen([PRODUCT, *TOAST], focused=False),  # "Not now" took the focus; a toast covers the box
        screen([SEARCH, PRODUCT], focused=False),  # the toast is gone: tap back into the box
        screen([SEARCH, PRODUCT], focused=True),
    ]
    pressed = []
    for obs in screens:
        plan = program.send(obs)
        pressed.append((plan.action.type, plan.action.x, plan.action.y) if plan.action.type == "tap"
                       else (plan.action.type, plan.action.text))
    x, y, w, h = SEARCH["box"]
    back = to_grid(x + w / 2, y + h / 2, 1000, 1000)  # the centre of the search box
    assert pressed == [("tap", 625, 62), ("tap", 633, 580), ("tap", 910, 80), ("tap", *back), ("type", "adapter")]
    assert program.send(screens[-1]) is None
