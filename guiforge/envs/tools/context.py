"""The episode context every tool runs against: the world, the workspace folder (and the
sandbox over it, for ``coding_tool``), and the images produced during the episode, kept by
handle (``img-1``, ``img-2``...)."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image
from pydantic import BaseModel

from guiforge.envs.sandbox import Sandbox
from guiforge.envs.tools.registry import ToolError
from guiforge.worlds.model import World

if TYPE_CHECKING:
    from guiforge.envs.tools.registry import Tool

HANDLE = re.compile(r"^img-\d+$")
MAX_IMAGE_PIXELS = 40_000_000  # a decompression bomb must not take the env down


class ImageRef(BaseModel):
    """An image held by the episode; pass ``handle`` to other image tools."""

    handle: str
    width: int
    height: int
    mode: str


@dataclass
class ToolContext:
    workspace: Path
    world: World | None = None
    available: dict[str, Tool] = field(default_factory=dict)
    images: dict[str, Image.Image] = field(default_factory=dict)
    produced: list[str] = field(default_factory=list)  # handles made by the current call
    coding_timeout_s: float = 20.0
    sandbox: Sandbox | None = None  # where coding_tool runs: the episode's, over the workspace

    # -- world ---------------------------------------------------------------------------
    def need_world(self) -> World:
        if self.world is None:
            raise ToolError("this task has no world; world look-ups are unavailable here")
        return self.world

    # -- files ---------------------------------------------------------------------------
    def path(self, relative: str, must_exist: bool = True) -> Path:
        """A workspace path; anything that resolves outside the workspace is refused."""
        root = self.workspace.resolve()
        full = (root / relative).resolve()
        if not full.is_relative_to(root):
            raise ToolError(f"{relative!r} is outside the workspace; use a path relative to it")
        if must_exist and not full.exists():
            raise ToolError(f"no file {relative!r} in the workspace; list_files shows what exists")
        return full

    def relative(self, full: Path) -> str:
        return full.resolve().relative_to(self.workspace.resolve()).as_posix()

    # -- images --------------------------------------------------------------------------
    def add_image(self, image: Image.Image) -> ImageRef:
        handle = f"img-{len(self.images) + 1}"
        self.images[handle] = image
        self.produced.append(handle)
        return ImageRef(handle=handle, width=image.width, height=image.height, mode=image.mode)

    def image(self, ref: str) -> Image.Image:
        """An image by handle, or loaded from a workspace path."""
        if HANDLE.match(ref):
            if ref not in self.images:
                known = ", ".join(self.images) or "none yet"
                raise ToolError(f"no image handle {ref!r} (known: {known}); open_image loads a file")
            return self.images[ref]
        full = self.path(ref)
        try:
            with Image.open(full) as img:
                if img.width * img.height > MAX_IMAGE_PIXELS:
                    raise ToolError(f"{ref!r} is {img.width}x{img.height}, too large to load")
                img.load()
                return img.copy()
        except (OSError, Image.DecompressionBombError) as exc:
            raise ToolError(f"{ref!r} is not a readable image ({exc})") from None

    def png(self, handle: str) -> bytes:
        buf = io.BytesIO()
        self.images[handle].save(buf, format="PNG")
        return buf.getvalue()
