"""What a person does about the things on screen that are not the task (see
guiforge/presentation.py and the apps' presentation.js): a modal is always closed first,
since nothing under it can be used; a cookie banner or a notification is ignored unless the
next target is not on screen, when it may be hiding it and is dismissed.

The reference program asks before grounding each step; the answer is the element to press
and a thought that says what is on screen and why, taken from the element scan.
"""

from __future__ import annotations

from typing import Any

from guiforge.envs.base import Observation

PREFIX = "gf-"  # ids of distractor controls; never a reference step's target


def _by_id(obs: Observation) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in obs.debug.get("elements", []) if (e.get("id") or "").startswith(PREFIX)}


def _name(el: dict[str, Any] | None, fallback: str) -> str:
    return " ".join(((el or {}).get("label") or fallback).split())[:80]


def next_dismissal(obs: Observation, target_visible: bool) -> tuple[dict[str, Any], str] | None:
    """The distractor control to press now, with the thought behind it, or None."""
    els = _by_id(obs)
    if not els:
        return None
    if "gf-dialog-dismiss" in els or "gf-dialog-close" in els:
        button = els.get("gf-dialog-dismiss") or els["gf-dialog-close"]
        title = _name(els.get("gf-dialog-close"), "a pop-up").removeprefix("Close").strip(" “”") or "a pop-up"
        return button, (f"A pop-up asking “{title}” is covering the app, and it has nothing to do with "
                        f"what I was asked, so I'll press “{_name(button, 'Not now')}” to get rid of it.")
    if target_visible:
        return None  # a banner or a toast that hides nothing is not worth a click
    if "gf-cookie-reject" in els:
        button = els["gf-cookie-reject"]
        return button, ("The cookie banner along the bottom may be hiding what I need, so I'll answer it "
                        f"with “{_name(button, 'Reject')}” and look again.")
    if "gf-toast-close" in els:
        note = _name(_by_id(obs).get("gf-toast"), "A notification").split(".")[0]
        return els["gf-toast-close"], (f"A notification (“{note}”) sits over part of the screen where "
                                       "my next control may be, so I'll dismiss it.")
    return None
