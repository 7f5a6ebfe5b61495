"""Screens for grounding data: a task's app state rendered under looks chosen to cover the
themes, screen sizes and distractors of its domain, and the screens one press away.

A task gives ``screens`` screens: its start screen under one look, then, under the next
looks, the screen after pressing one of the start screen's elements (a message opens, a
menu drops, a form appears). Each press starts from a reset, so every screen is a pure
function of (task state, look, element pressed). A screen identical to one already taken
is skipped.
"""

from __future__ import annotations

import hashlib
import random
import time
from dataclasses import dataclass, field
from typing import Any

from guiforge.envs.actions import Action
from guiforge.envs.base import TaskSpec
from guiforge.envs.web.grounding_scan import OK, grounding_scan
from guiforge.lake.fingerprint import fingerprint
from guiforge.presentation import KINDS, THEMES, VARIANTS, VIEWPORTS, Distractor, Presentation

# Elements worth pressing to reach another screen: not text fields (a press only focuses)
# and not the distractors' own buttons.
_NO_PRESS_ROLES = ("text field", "text box", "search box")


@dataclass
class Screen:
    """One rendered screen: its frame, its grounding scan and how it was reached."""

    screen_id: str
    task_id: str
    world_id: str | None
    domain: str
    image: bytes
    image_format: str
    width: int
    height: int
    scan: dict[str, Any]
    look: Presentation
    via: str | None = None
    render_s: float = 0.0
    elements: list[dict[str, Any]] = field(default_factory=list)  # the hit-tested ones

    @property
    def route(self) -> str:
        return str(self.scan.get("path") or "/")

    @property
    def app(self) -> str:
        parts = [p for p in self.route.split("/") if p]
        return parts[0] if parts else "launcher"

    @property
    def theme(self) -> str | None:
        return self.look.theme.name if self.look.theme else None

    @property
    def distractor_kinds(self) -> list[str]:
        return [d.kind for d in self.look.distractors]


def looks(domain: str, n: int, seed: str, distractor_share: float) -> list[Presentation]:
    """``n`` looks for screens of ``domain``: themes and viewports in turn from a seeded
    offset (so a few screens already span them), a distractor on screen at once on about
    ``distractor_share`` of the screens after the first. A domain with no viewports of its own gets plain looks."""
    sizes = VIEWPORTS.get(domain)
    if not sizes:
        return [Presentation() for _ in range(n)]
    rng = random.Random(fingerprint(["grounding-looks", seed]))
    t0, v0 = rng.randrange(len(THEMES)), rng.randrange(len(sizes))
    kinds = KINDS.get(domain, ())
    out = []
    for i in range(n):
        shown: tuple[Distractor, ...] = ()
        if kinds and rng.random() < distractor_share and i > 0:
            # after the press that reaches the screen: the start screen stays clear, so its
            # elements can all be pressed
            kind = rng.choice(kinds)
            shown = (Distractor(kind=kind, variant=rng.randrange(VARIANTS[kind]), after_clicks=1),)
        out.append(Presentation(theme=THEMES[(t0 + i) % len(THEMES)], viewport=sizes[(v0 + i // 2) % len(sizes)],
                                distractors=shown))
    return out


def render_task(lease, spec: TaskSpec, n: int, seed: str, distractor_share: float, touch: bool,
                role_of) -> list[Screen]:
    """Up to ``n`` screens of ``spec``'s app state (see the module); ``role_of`` names an
    element's role (expressions.role_word), ``touch`` presses with taps."""
    env = lease.env
    if not hasattr(env, "js_sync"):
        raise TypeError(f"task {spec.task_id}: the {spec.domain} environment is not a web page; the grounding "
                        "stage renders web and mobile screens only (set the stage's domains)")
    chosen = looks(spec.domain, n, f"{seed}:{spec.task_id}", distractor_share)
    rng = random.Random(fingerprint(["grounding-press", seed, spec.task_id]))
    screens: list[Screen] = []
    seen: set[str] = set()
    pressable: list[dict[str, Any]] = []
    for i, look in enumerate(chosen):
        t = time.perf_counter()
        task = spec.model_copy(update={"presentation": look.as_dict()})
        obs = lease.reset(task)
        via = None
        if i > 0:
            if not pressable:
                break
            target = pressable.pop(rng.randrange(len(pressable)))
            via = target.get("name") or target.get("id")
            # the same element on this look's screen (sizes differ between looks)
            now = [e for e in grounding_scan(env)["elements"]
                   if e["status"] == OK and e.get("id") == target.get("id") and e.get("name") == target.get("name")]
            if not now:
                continue
            gx, gy = now[0]["grid"]
            result = lease.step(Action(type="tap" if touch else "click", x=gx, y=gy))
            if result.error:
                continue
            obs = result.observation
        if not obs.screenshot:
            continue
        scan = grounding_scan(env)
        key = hashlib.sha256(obs.screenshot).hexdigest()
        if key in seen:
            continue
        seen.add(key)
        screen = Screen(screen_id="scr_" + fingerprint([spec.task_id, i, via, look.as_dict(), seed], 14),
                        task_id=spec.task_id, world_id=spec.world_id, domain=spec.domain, image=obs.screenshot,
                        image_format=obs.format, width=obs.width, height=obs.height, scan=scan, look=look, via=via,
                        render_s=time.perf_counter() - t,
                        elements=[e for e in scan["elements"] if e["status"] == OK])
        screens.append(screen)
        if i == 0:
            # distractors' own buttons close them: the next screens come from the app's
            pressable = [e for e in screen.elements if role_of(e) not in _NO_PRESS_ROLES
                         and not (e.get("id") or "").startswith("gf-") and not e.get("disabled")]
    return screens
