"""How a task looks: the app theme, the screen size and the distractors that interrupt it.

A presentation is drawn once per task from its id and the run's seed, recorded on the
task (``tasks.presentation_json``) and applied by the environment on reset, so the same
task always gives the same frames. Nothing here changes what the verifier reads: themes and
viewports are pixels, and distractors live outside the apps' state.

Distractors appear after a number of the agent's clicks (0: already on screen when the
episode starts), never on a timer, so a replayed action sequence sees them at the same
step. A modal must be dismissed before anything under it can be used; a banner or a toast
can be ignored unless it covers what the agent needs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from guiforge.lake.fingerprint import fingerprint


class Theme(BaseModel):
    """One app skin: light or dark, row density, accent colour and UI font."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    mode: Literal["light", "dark"] = "light"
    density: Literal["comfortable", "compact"] = "comfortable"
    accent: str = "#2563eb"
    font: Literal["sans", "condensed", "serif"] = "sans"
    # the surfaces' colours past light or dark (core.css :root[data-palette]); None: the mode's own
    palette: Literal["sand", "slate", "nord", "contrast"] | None = None


class Distractor(BaseModel):
    """Something on screen that is not part of the task: a cookie banner, a modal asking
    for something, or a notification toast."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["cookie", "dialog", "toast"]
    variant: int = Field(default=0, ge=0)  # which wording (core.js holds the texts)
    after_clicks: int = Field(default=0, ge=0)  # shown once the agent has clicked this often


class Browser(BaseModel):
    """The browser around a web app (static/chrome.js): a tab strip with the task's page and
    ``tabs`` other apps the person had open (from the app order, rotated by ``offset``),
    back, forward, reload and an address bar showing the page's URL. All of it works."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tabs: int = Field(default=0, ge=0, le=7)
    offset: int = Field(default=0, ge=0)


class Phone(BaseModel):
    """A phone's own bars around a mobile app: a status bar (the world's clock, unread-mail
    and chat notices, signal, a battery that drains with the clock) and a navigation bar:
    Android's gesture pill or its back / home / recent-apps buttons."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    nav: Literal["gesture", "buttons"] = "gesture"
    battery: int = Field(default=80, ge=1, le=100)


class Terminal(BaseModel):
    """A terminal window's grid of character cells (envs/desktop/terminal_screen draws it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cols: int = Field(default=80, ge=20, le=300)
    rows: int = Field(default=24, ge=5, le=100)


class Presentation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    theme: Theme | None = None
    viewport: tuple[int, int] | None = None
    distractors: tuple[Distractor, ...] = ()
    browser: Browser | None = None  # web: the browser around the app
    phone: Phone | None = None  # mobile: the phone's status and navigation bars
    terminal: Terminal | None = None  # a desktop terminal task: its window's columns and rows
    # desktop: how the reference drives LibreOffice (menus and dialogs by mouse, or shortcuts)
    style: Literal["mouse", "keyboard"] | None = None

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    def extra_steps(self) -> int:
        """Actions the distractors may cost on top of the task's own: a press to get rid of
        each, and one to go back to the field it took the focus from."""
        return 2 * len(self.distractors)


THEMES: tuple[Theme, ...] = (
    Theme(name="daylight", mode="light", density="comfortable", accent="#2563eb", font="sans"),
    Theme(name="midnight", mode="dark", density="comfortable", accent="#14b8a6", font="sans"),
    Theme(name="ledger", mode="light", density="compact", accent="#7c3aed", font="condensed"),
    Theme(name="graphite", mode="dark", density="compact", accent="#f97316", font="condensed"),
    Theme(name="paper", mode="light", density="comfortable", accent="#15803d", font="serif"),
    Theme(name="berry", mode="light", density="compact", accent="#db2777", font="sans"),
    Theme(name="sand", mode="light", density="comfortable", accent="#b45309", font="serif", palette="sand"),
    Theme(name="slate", mode="light", density="compact", accent="#0f766e", font="sans", palette="slate"),
    Theme(name="nord", mode="dark", density="comfortable", accent="#88c0d0", font="sans", palette="nord"),
    Theme(name="contrast", mode="light", density="comfortable", accent="#1d4ed8", font="sans", palette="contrast"),
)

# LibreOffice's looks, by name (envs/desktop/profile.theme_settings: toolbar icon size, a
# sepia page on a dark surround); accent and font are the document's own.
DESKTOP_THEMES: tuple[Theme, ...] = (
    Theme(name="office-light", mode="light", density="comfortable"),
    Theme(name="office-compact", mode="light", density="compact"),
    Theme(name="office-sepia", mode="light", density="comfortable", accent="#8a6d3b"),
)

# A terminal window's colour schemes, by name (envs/desktop/terminal_screen.PALETTES holds
# their colours); accent is the prompt's colour.
TERMINAL_THEMES: tuple[Theme, ...] = (
    Theme(name="terminal-aubergine", mode="dark", accent="#8ae234"),
    Theme(name="terminal-light", mode="light", accent="#4e9a06"),
    Theme(name="terminal-solarized-dark", mode="dark", accent="#859900"),
    Theme(name="terminal-solarized-light", mode="light", accent="#859900"),
    Theme(name="terminal-tango-dark", mode="dark", accent="#4e9a06"),
)

# Screen sizes people use: laptop and desktop monitors for web and desktop, CSS viewports
# of common phones (the browser's own bars already taken off) for mobile.
VIEWPORTS: dict[str, tuple[tuple[int, int], ...]] = {
    "web": ((1280, 720), (1366, 768), (1536, 864), (1920, 1080)),
    "desktop": ((1280, 720), (1366, 768), (1920, 1080)),  # each size: an Xvfb and a profile template
    "mobile": ((412, 839), (360, 760), (390, 750), (393, 786)),  # x2.625 (Pixel) whole or not .5
}
# Terminal windows in columns x rows: the classic default and the larger ones people open.
TERMINAL_GRIDS: tuple[tuple[int, int], ...] = ((80, 24), (100, 30), (120, 36))

# How many wordings core.js has for each kind, and which kinds guiforge's apps show by domain
# (a phone app has no cookie banner; LibreOffice gets none of the web distractors). The
# tables here are the data of guiforge's own kinds (envs/kinds_builtin.py: ``looks_for``).
VARIANTS = {"cookie": 3, "dialog": 4, "toast": 4}
KINDS: dict[str, tuple[str, ...]] = {"web": ("cookie", "dialog", "toast"), "mobile": ("dialog", "toast")}
# How a desktop reference works LibreOffice: the mouse through menus and dialogs, or shortcuts.
STYLES = ("mouse", "keyboard")
# Share of tasks that show each kind at all.
RATES = {"cookie": 0.4, "dialog": 0.3, "toast": 0.35}
# What guiforge's apps are drawn inside, by domain: a browser's bars or a phone's (a desktop
# terminal task's kind asks for a terminal window: its looks' viewports are TERMINAL_GRIDS).
SCREENS: dict[str, Literal["browser", "phone"]] = {"web": "browser", "mobile": "phone"}


def theme_named(name: str) -> Theme:
    known = THEMES + DESKTOP_THEMES + TERMINAL_THEMES
    for theme in known:
        if theme.name == name:
            return theme
    raise KeyError(f"unknown theme {name!r}; known: {', '.join(t.name for t in known)}")


@dataclass(frozen=True)
class Looks:
    """What one environment kind's tasks are drawn from (its ``looks_for``): the screen sizes,
    the themes, the distractor kinds it shows, and the ways its reference may work the
    screen (a desktop's mouse or keyboard). A kind with none draws nothing."""

    viewports: tuple[tuple[int, int], ...]
    themes: tuple[Theme, ...] = THEMES
    distractors: tuple[str, ...] = ()  # kinds of VARIANTS, in drawing order
    styles: tuple[str, ...] = ()
    # what is drawn around the app (static/chrome.js); "terminal": the viewports are a terminal's
    # (columns, rows), recorded as Presentation.terminal
    screen: Literal["browser", "phone", "terminal"] | None = None


def sample_presentation(looks: Looks | None, task_id: str, seed: int | str = 0,
                        distractors: bool = True) -> Presentation:
    """The presentation of one task: a pure function of (its kind's looks, task id, seed)."""
    if looks is None or not looks.viewports:  # tools, a bare terminal: nothing is drawn
        return Presentation()
    rng = random.Random(fingerprint(["presentation", seed, task_id]))
    viewport = rng.choice(looks.viewports)
    theme = rng.choice(looks.themes)
    if looks.screen == "terminal":  # a window of character cells, its pixels the renderer's
        return Presentation(theme=theme, terminal=Terminal(cols=viewport[0], rows=viewport[1]))
    shown: list[Distractor] = []
    for kind in looks.distractors if distractors else ():
        if rng.random() < RATES[kind]:
            # a cookie banner greets the first page; the others interrupt a little later
            after = 0 if kind == "cookie" else rng.choice((0, 1, 1, 2, 3))
            shown.append(Distractor(kind=kind, variant=rng.randrange(VARIANTS[kind]), after_clicks=after))
    browser, phone = screen_around(looks.screen, task_id, seed)
    style = None
    if looks.styles:  # its own draw, so the looks drawn above stay what they were
        style = random.Random(fingerprint(["input-style", seed, task_id])).choice(looks.styles)
    return Presentation(theme=theme, viewport=viewport, distractors=tuple(shown), style=style, browser=browser,
                        phone=phone)


def screen_around(screen: str | None, task_id: str, seed: int | str = 0) -> tuple[Browser | None, Phone | None]:
    """The browser or phone drawn around a task's app (its kind's ``Looks.screen``), from a
    draw of its own (the looks drawn before it stay what they were): every web task in a
    browser with 0-4 other tabs, every phone with its bars, half with gestures, half with buttons."""
    rng = random.Random(fingerprint(["screen", seed, task_id]))
    if screen == "browser":
        return Browser(tabs=rng.choice((0, 1, 2, 2, 3, 4)), offset=rng.randrange(8)), None
    if screen == "phone":
        return None, Phone(nav=rng.choice(("gesture", "buttons")), battery=rng.randint(12, 98))
    return None, None


def harder_presentation(looks: Looks | None, task_id: str, seed: int | str = 0) -> Presentation:
    """A harder look of a task, for resynthesis: the smallest screen of its kind (smaller
    targets), a compact theme (denser lists) and every distractor the kind shows."""
    base = sample_presentation(looks, task_id, seed)
    if looks is None or base.viewport is None:
        return base
    rng = random.Random(fingerprint(["harder", seed, task_id]))
    smallest = min(looks.viewports, key=lambda v: v[0] * v[1])
    compact = [t for t in looks.themes if t.density == "compact"]
    shown = tuple(Distractor(kind=k, variant=rng.randrange(VARIANTS[k]),
                             after_clicks=0 if k == "cookie" else rng.choice((0, 1, 2)))
                  for k in looks.distractors)
    return base.model_copy(update={"viewport": smallest, "theme": rng.choice(compact) if compact else base.theme,
                                   "distractors": shown})


def presentation_of(value: Any) -> Presentation:
    """A recorded presentation (dict, JSON text or None) back as a model."""
    if value is None or value == "":
        return Presentation()
    if isinstance(value, Presentation):
        return value
    if isinstance(value, str):
        return Presentation.model_validate_json(value)
    return Presentation.model_validate(value)
