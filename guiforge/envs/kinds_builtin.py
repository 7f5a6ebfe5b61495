"""guiforge's own environment kinds: web, mobile, desktop and tools. They register through
the same ``guiforge.envs`` entry points an outside package uses (pyproject.toml) and import
their adapters (Playwright, X clients) only when an instance starts."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from guiforge.envs.actions import ACTION_SETS
from guiforge.envs.base import EnvSpec
from guiforge.envs.kind import EnvKind, kept, stored_setup
from guiforge.presentation import (
    DESKTOP_THEMES,
    KINDS,
    SCREENS,
    STYLES,
    TERMINAL_GRIDS,
    TERMINAL_THEMES,
    THEMES,
    VIEWPORTS,
    Looks,
)

if TYPE_CHECKING:
    from guiforge.worlds.model import World


class PageKind(EnvKind):
    """Web and mobile: the local apps in Chromium, their state seeded from the world."""

    def looks_for(self, variant=None) -> Looks:
        # read on each call: a test may narrow the tables to one screen size
        return Looks(VIEWPORTS[self.domain], THEMES, KINDS[self.domain], screen=SCREENS[self.domain])

    def spec(self, variant=None, presentation=None, **options) -> EnvSpec:
        # pages resize and restyle on reset: one pool serves every look
        return EnvSpec(domain=self.domain)

    def setup(self, task: Mapping[str, Any], world: World | None) -> dict[str, Any]:
        setup = stored_setup(task)
        if world is None:
            return setup  # a task without a world carries its app state itself
        # heavy: faker, jinja2 (the worlds package), imported when this runs
        from guiforge.preparers.web_apps import web_setup

        built = web_setup(world, apps=setup.get("apps") or list(task.get("apps") or []),
                          start=setup.get("start"))
        return kept(setup, {"apps", "start"}, built)


class WebKind(PageKind):
    domain = "web"
    surface = "a web browser with a suite of apps (mail, calendar, contacts, shop, notes, bank, travel, chat)"
    adapter = "guiforge.envs.web:WebEnv"
    action_sets = {None: ACTION_SETS["web"]}


class MobileKind(PageKind):
    domain = "mobile"
    surface = "an Android-style phone with the same apps, driven by touch"
    adapter = "guiforge.envs.web:MobileEnv"
    action_sets = {None: ACTION_SETS["mobile"]}
    touch = True

    def spec(self, variant=None, presentation=None, **options) -> EnvSpec:
        # phone frames in device or CSS pixels: instances differ, so it is part of the pool key
        return EnvSpec(domain=self.domain, screenshot_scale=options.get("phone_screenshots"))


class DesktopKind(EnvKind):
    """LibreOffice on Xvfb and a bwrap shell over a workspace of files made from the world."""

    domain = "desktop"
    surface = "a Linux desktop with LibreOffice (Calc, Impress, Writer) on a workspace of files"
    adapter = "guiforge.envs.desktop:DesktopEnv"
    action_sets = {"gui": ACTION_SETS["desktop_gui"], "terminal": ACTION_SETS["desktop_terminal"],
                   "hybrid": ACTION_SETS["desktop_hybrid"], None: ACTION_SETS["desktop_hybrid"]}

    default_variant = "hybrid"
    computer = "linux"
    reference_dialect = "desktop"  # LibreOffice by keyboard recipes and menus, no element geometry

    def variants(self) -> tuple[str | None, ...]:
        return ("gui", "terminal", "hybrid")

    def looks_for(self, variant=None) -> Looks | None:
        if variant == "terminal":  # a terminal window: its columns x rows and colour scheme
            return Looks(TERMINAL_GRIDS, TERMINAL_THEMES, screen="terminal")
        return Looks(VIEWPORTS[self.domain], DESKTOP_THEMES, (), STYLES)

    def surface_for(self, variant: str | None = None) -> str:
        if variant == "terminal":
            return "a Linux terminal (bash) in a sandbox whose working directory holds the task's files"
        return self.surface + (", plus a terminal (bash) on the same files" if variant == "hybrid" else "")

    def spec(self, variant=None, presentation=None, **options) -> EnvSpec:
        # A desktop's screen size (its Xvfb's) and look (its LibreOffice profile) are fixed
        # when the instance starts, so a task's viewport and theme pick the pool; a terminal
        # window is drawn on each reset in the task's look, so any instance serves it.
        look = (presentation or {}) if variant != "terminal" else {}
        viewport, theme = look.get("viewport"), (look.get("theme") or {}).get("name")
        return EnvSpec(domain=self.domain, variant=variant, viewport=tuple(viewport) if viewport else None, theme=theme)

    def setup(self, task: Mapping[str, Any], world: World | None) -> dict[str, Any]:
        setup = stored_setup(task)
        if world is None:
            return setup  # files given as content (text, base64, path): nothing to build
        return {**{k: v for k, v in setup.items() if k != "files"}, "files": _files(world, setup.get("files"))}


class ToolsKind(EnvKind):
    domain = "tools"
    surface = "a registry of tools you call with JSON arguments"
    adapter = "guiforge.envs.tools:ToolsEnv"
    action_sets = {None: ACTION_SETS["tools"]}

    def points(self, variant: str | None = None) -> bool:
        return False

    def spec(self, variant=None, presentation=None, **options) -> EnvSpec:
        return EnvSpec(domain=self.domain)

    def setup(self, task: Mapping[str, Any], world: World | None) -> dict[str, Any]:
        setup = stored_setup(task)
        if world is None:
            return setup
        # The tools env takes text as is and binary files (xlsx, pdf, png...) as base64.
        files = {name: _tools_file(data) for name, data in _files(world, setup.get("files")).items()}
        built: dict[str, Any] = {"world": json.loads(world.model_dump_json()), "files": files}
        if setup.get("tools"):
            built["tools"] = setup["tools"]
        return kept(setup, {"files", "tools", "world"}, built)


def _files(world: World, spec: Any) -> dict[str, Any]:
    if not spec:
        return {}
    # heavy: PIL, docx, lxml, numpy, openpyxl, pptx, reportlab, imported when this runs
    from guiforge.preparers.files import prepare_workspace

    return prepare_workspace(world, spec)


def _tools_file(data: Any) -> Any:
    if not isinstance(data, bytes):
        return data
    try:
        return data.decode("utf-8") if b"\x00" not in data else {"base64": base64.b64encode(data).decode()}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode()}


WEB, MOBILE, DESKTOP, TOOLS = WebKind(), MobileKind(), DesktopKind(), ToolsKind()
