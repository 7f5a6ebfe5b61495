"""A web environment kind over a site of your own: a directory of pages (HTML, CSS, JS,
images) that guiforge serves to Chromium itself, from memory, under a reserved origin
(``http://site.guiforge.test``), the way it serves its own apps.

Chromium runs in a loopback-only network namespace (SECURITY.md): a server you start on the
host's 127.0.0.1 is not reachable from the page, so a kind declares its pages instead and
guiforge's router answers every request for them (guiforge/envs/web/site.py). Subclass
:class:`SiteKind`, set ``domain``, ``surface`` and ``pages`` (a directory, or
``package:folder`` for one shipped in a package), and optionally ``state_script`` (a page
function whose value the verifier reads as ``state.apps["site"]``) and ``evaluate()``.

A task of such a kind carries its own setup (no world): ``{"page": "quiz.html", "query":
{...}}`` opens ``/quiz.html?...``; any other key is kept for checks and ``evaluate``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from guiforge.envs.actions import ACTION_SETS
from guiforge.envs.base import Environment, EnvSpec
from guiforge.envs.kind import EnvKind
from guiforge.plugins import load_value

# What the verifier reads by default: where the page is, its title, and the value of every
# named or id'd form field (checkboxes as booleans).
DEFAULT_STATE_SCRIPT = """() => {
  const fields = {};
  for (const el of document.querySelectorAll("input, textarea, select")) {
    const key = el.id || el.name;
    if (!key) continue;
    fields[key] = (el.type === "checkbox" || el.type === "radio") ? el.checked : el.value;
  }
  return {url: location.pathname + location.search, title: document.title, fields,
          page: window.siteState ? window.siteState() : null};
}"""


class SiteKind(EnvKind):
    """A web kind over ``pages``: the web action set on a desktop viewport."""

    surface = "a web browser showing a site"
    notes = ("On this site, goto opens one of its pages by its path (for example index.html), not an app; "
             "nothing outside the site can be opened.")
    adapter = "guiforge.envs.web.site:SiteEnv"
    action_sets = {None: ACTION_SETS["web"]}
    pages: str | Path = ""  # a directory, or "package:folder"
    state_script: str = DEFAULT_STATE_SCRIPT
    viewport: tuple[int, int] = (1280, 720)

    def pages_dir(self) -> Path:
        """The directory of the site's pages."""
        pages = str(self.pages)
        package, sep, folder = pages.partition(":")
        root = Path(str(resources.files(package).joinpath(folder))) if sep and "/" not in package else Path(pages)
        if not root.is_dir():
            raise ValueError(f"environment kind {self.domain!r}: pages {pages!r} is not a directory")
        return root

    def spec(self, variant=None, presentation=None, **options: Any) -> EnvSpec:
        return EnvSpec(domain=self.domain, viewport=self.viewport)

    def make(self, spec: EnvSpec) -> Environment:
        cls = load_value(str(self.adapter), f"the adapter of environment kind {self.domain!r}")
        return cls(spec, root=self.pages_dir(), state_script=self.state_script)
