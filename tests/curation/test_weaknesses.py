"""Planted weaknesses: mistakes that depend on what the scripted teacher acts on."""

from __future__ import annotations

import random

from guiforge.envs.actions import Action
from guiforge.envs.base import Observation
from guiforge.harness.policies import perturb_text
from guiforge.teacher.weaknesses import Weaknesses, apply_weaknesses

SMALL = {"id": "x", "tag": "button", "label": "x", "box": [100, 100, 16, 16]}
LARGE = {"id": "ok", "tag": "button", "label": "OK", "box": [400, 400, 120, 40]}
OBS = Observation(width=1000, height=1000, debug={"elements": [SMALL, LARGE]})


def apply(w, action, step=0, apps=("mail",), seed=0):
    return apply_weaknesses(w, action, OBS, step, list(apps), random.Random(seed), perturb_text)


def test_each_weakness_fires_only_where_it_is_planted():
    on_small = Action(type="click", x=108, y=108)
    on_large = Action(type="click", x=460, y=420)
    w = Weaknesses(small_target_misclick=1.0)
    assert apply(w, on_small)[0] != on_small and apply(w, on_large)[0] == on_large
    w = Weaknesses(weak_app="shop", weak_app_misclick=1.0)
    assert apply(w, on_large, apps=["shop"])[0] != on_large and apply(w, on_large)[0] == on_large
    w = Weaknesses(non_ascii_wrong_value=1.0)
    assert apply(w, Action(type="type", text="Zoë"))[0].text == "Zo"
    assert apply(w, Action(type="type", text="Zoe"))[0].text == "Zoe"
    w = Weaknesses(long_task_early_stop=1.0)
    assert apply(w, on_large, step=9)[0] == on_large and apply(w, on_large, step=10) == (None, "long_task")
    w = Weaknesses(weak_action="type", weak_action_rate=1.0)
    assert apply(w, Action(type="type", text="12.50"))[0].text != "12.50" and apply(w, on_large)[0] == on_large


def test_planted_keys_name_what_the_diagnoser_reports():
    w = Weaknesses(small_target_misclick=0.5, weak_app="shop", weak_app_misclick=0.3, long_task_early_stop=0.1,
                   weak_action="type", weak_action_rate=0.3)
    assert w.planted() == ["target_size:<24px", "task_length:>10", "app:shop", "action_type:type"]
    assert not Weaknesses().active
