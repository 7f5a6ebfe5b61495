"""The picture of a terminal window: what a person at the desktop task's bash would see.

A :class:`TerminalScreen` keeps the session's scrollback as a terminal shows it: a bash
prompt (``agent@sandbox:~/data$``, the sandbox's user, host and directory, the home
directory as ``~``), each command as typed after it, its output, and the next prompt,
which follows output that did not end in a newline on the same line, as bash's does.
:meth:`TerminalScreen.png` draws the last ``rows`` lines of that, each wrapped at ``cols``
cells, in DejaVu Sans Mono on a cell grid under a title bar, with a block cursor after the
last prompt; until the window fills, lines start at the top, as in a fresh terminal.

Drawing is a pure function of the scrollback, the grid and the palette (glyphs are
rendered once per font and pasted at whole-pixel cell positions, PNG written without a
timestamp), so two identical sessions give byte-identical images.
"""

from __future__ import annotations

import io
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from guiforge.envs.base import EnvFailure
from guiforge.envs.sandbox.bwrap import WORKDIR

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
MONO, MONO_BOLD, TITLE_FONT = "DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf", "DejaVuSans.ttf"
FONT_PX = 15
CELL = (9, 18)  # DejaVu Sans Mono at 15 px: a 9.03 px advance, ascent 14 + descent 4
PAD = 6  # between the window's border and the grid
TITLE_H = 28
TAB = 8
USER, HOST, HOME = "agent", "sandbox", WORKDIR  # the sandbox's /etc/passwd, hostname and $HOME (bwrap.py)

# ANSI escapes (colours, cursor moves) a program may print although no tty is attached:
# dropped, like any other control character but tab and newline
_ESCAPE = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class Palette:
    """A terminal profile's colours: the page, text, the prompt's user@host and directory,
    the cursor and the window's title bar."""

    background: str
    text: str
    user: str
    path: str
    cursor: str
    bar: str
    bar_text: str


# the presentation's TERMINAL_THEMES by name: GNOME Terminal's and xterm's common profiles
PALETTES: dict[str, Palette] = {
    "terminal-aubergine": Palette("#300a24", "#ffffff", "#8ae234", "#729fcf", "#ffffff", "#2c2c2c", "#f2f2f2"),
    "terminal-light": Palette("#ffffff", "#171421", "#26a269", "#12488b", "#171421", "#ebebeb", "#2e3436"),
    "terminal-solarized-dark": Palette("#002b36", "#839496", "#859900", "#268bd2", "#93a1a1", "#073642", "#93a1a1"),
    "terminal-solarized-light": Palette("#fdf6e3", "#657b83", "#859900", "#268bd2", "#586e75", "#eee8d5", "#586e75"),
    "terminal-tango-dark": Palette("#2e3436", "#d3d7cf", "#4e9a06", "#3465a4", "#d3d7cf", "#1e2324", "#d3d7cf"),
}
DEFAULT_THEME = "terminal-aubergine"
DEFAULT_GRID = (80, 24)


def palette_of(theme: str | None) -> Palette:
    """The palette of a terminal theme; a task without one (or one drawn before terminals
    had looks, such as a GUI theme) gets the default profile."""
    return PALETTES.get(theme or "", PALETTES[DEFAULT_THEME])


def shown_path(cwd: str) -> str:
    """The directory as bash's ``\\w`` writes it: the home directory as ``~``."""
    if cwd == HOME or cwd.startswith(HOME + "/"):
        return "~" + cwd[len(HOME):]
    return cwd


def clean(text: str) -> str:
    """Output as the screen shows it: escapes and control characters dropped, a carriage
    return (a progress bar redrawn) leaving what was written last on its line."""
    text = _ESCAPE.sub("", text.replace("\r\n", "\n"))
    lines = [line.rsplit("\r", 1)[-1] for line in text.split("\n")]
    return _CONTROL.sub("", "\n".join(lines))


def cell_width(ch: str) -> int:
    """Cells a character takes: two for East Asian wide ones, none for a combining mark."""
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


Span = tuple[str, str, bool]  # text, colour role (a Palette field), bold


class TerminalScreen:
    """One session's scrollback and the window it is drawn in (see the module)."""

    def __init__(self, cols: int = DEFAULT_GRID[0], rows: int = DEFAULT_GRID[1], theme: str | None = None):
        self.cols, self.rows = cols, rows
        self.palette = palette_of(theme)
        self.logical: list[list[Span]] = [[]]  # the scrollback's lines, split at newlines only
        self.cwd = HOME

    @property
    def size(self) -> tuple[int, int]:
        """The window's pixels (width, height)."""
        return 2 * PAD + self.cols * CELL[0], TITLE_H + 2 * PAD + self.rows * CELL[1]

    def prompt(self, cwd: str) -> None:
        """Show bash's prompt for ``cwd``: where the next command is typed."""
        self.cwd = cwd
        for span in ((f"{USER}@{HOST}", "user", True), (":", "text", False),
                     (shown_path(cwd), "path", True), ("$ ", "text", False)):
            self._write(*span)

    def command(self, command: str, output: str, cwd_after: str) -> None:
        """A command typed at the prompt (continuation lines after bash's ``> ``), its
        output, and the prompt that follows it."""
        self._write(clean(command).rstrip("\n").replace("\n", "\n> ") + "\n", "text", False)
        self._write(clean(output), "text", False)
        self.prompt(cwd_after)

    def _write(self, text: str, role: str, bold: bool) -> None:
        first, *rest = text.split("\n")
        if first:
            self.logical[-1].append((first, role, bold))
        self.logical += [[(part, role, bold)] if part else [] for part in rest]
        del self.logical[:-self.rows]  # the window never shows more (each is a screen line at least)

    def lines(self) -> list[list[tuple[str, str, bool]]]:
        """The screen lines of the scrollback's last ``rows`` lines (enough to fill the
        window: each is one screen line at least), wrapped at ``cols``: per line its cells as
        (character, colour role, bold), a wide character followed by an empty cell."""
        out: list[list[tuple[str, str, bool]]] = []
        for line in self.logical[-self.rows:]:
            out.append([])
            for text, role, bold in line:
                self._wrap(out, text, role, bold)
        return out

    def _wrap(self, out: list[list[tuple[str, str, bool]]], text: str, role: str, bold: bool) -> None:
        for ch in text:
            if ch == "\t":
                for _ in range(TAB - len(out[-1]) % TAB):
                    self._put(out, (" ", role, bold), 1)
                continue
            width = cell_width(ch)
            if width == 0:
                if out[-1]:  # a combining mark joins the character before it
                    c, r, b = out[-1][-1]
                    out[-1][-1] = (c + ch, r, b)
                continue
            self._put(out, (ch, role, bold), width)

    def _put(self, out: list[list[tuple[str, str, bool]]], cell: tuple[str, str, bool], width: int) -> None:
        if len(out[-1]) + width > self.cols:
            out.append([])  # the terminal wraps at its last column
        out[-1].append(cell)
        if width == 2:
            out[-1].append(("", cell[1], cell[2]))

    def visible(self) -> tuple[list[list[tuple[str, str, bool]]], tuple[int, int]]:
        """The lines in the window and the cursor's (column, row): the last ``rows`` lines,
        the cursor after the last character (at the next line's start when the last one is full)."""
        lines = self.lines()
        col = len(lines[-1])
        if col >= self.cols:
            lines.append([])
            col = 0
        shown = lines[-self.rows:]
        return shown, (col, len(shown) - 1)

    def title(self) -> str:
        return f"{USER}@{HOST}: {shown_path(self.cwd)}"

    def image(self) -> Image.Image:
        """The window as an RGB image (see the module)."""
        pal = self.palette
        width, height = self.size
        img = Image.new("RGB", (width, height), pal.background)
        draw = ImageDraw.Draw(img)
        draw.rectangle((0, 0, width - 1, TITLE_H - 1), fill=pal.bar)
        title_font = _font(TITLE_FONT, 13)
        title = self.title()
        draw.text(((width - title_font.getlength(title)) // 2, (TITLE_H - 13) // 2 - 1), title,
                  font=title_font, fill=pal.bar_text)
        _window_buttons(draw, width, pal.bar_text)
        shown, (cur_col, cur_row) = self.visible()
        top = TITLE_H + PAD
        for r, cells in enumerate(shown):
            y = top + r * CELL[1]
            for c, (ch, role, bold) in enumerate(cells):
                if ch and ch != " ":
                    mask = _glyph(ch, bold)
                    img.paste(getattr(pal, role), (PAD + c * CELL[0], y, PAD + c * CELL[0] + mask.width,
                                                   y + mask.height), mask)
        x, y = PAD + cur_col * CELL[0], top + cur_row * CELL[1]
        draw.rectangle((x, y, x + CELL[0] - 1, y + CELL[1] - 1), fill=pal.cursor)
        return img

    def png(self) -> bytes:
        buf = io.BytesIO()
        self.image().save(buf, format="PNG", optimize=False, compress_level=3)
        return buf.getvalue()


def _window_buttons(draw: ImageDraw.ImageDraw, width: int, colour: str) -> None:
    """Minimise, maximise and close at the title bar's right, as a window manager draws them."""
    y = TITLE_H // 2
    for i, kind in enumerate(("min", "max", "close")):
        x = width - 78 + i * 26
        if kind == "min":
            draw.line((x, y + 4, x + 9, y + 4), fill=colour, width=1)
        elif kind == "max":
            draw.rectangle((x, y - 4, x + 9, y + 5), outline=colour, width=1)
        else:
            draw.line((x, y - 4, x + 9, y + 5), fill=colour, width=1)
            draw.line((x, y + 5, x + 9, y - 4), fill=colour, width=1)


@lru_cache(maxsize=4)
def _font(name: str, px: int) -> ImageFont.FreeTypeFont:
    path = FONT_DIR / name
    try:
        # the basic layout: the same glyph positions whether or not this PIL has libraqm
        return ImageFont.truetype(str(path), px, layout_engine=ImageFont.Layout.BASIC)
    except OSError:
        raise EnvFailure(f"{path}: the terminal window is drawn in DejaVu fonts, and this one cannot be read; "
                         "install them (apt-get install fonts-dejavu-core, as scripts/bootstrap.sh does)") from None


@lru_cache(maxsize=4096)
def _glyph(ch: str, bold: bool) -> Image.Image:
    """A character's coverage in one cell (two for a wide one), drawn once."""
    mask = Image.new("L", (CELL[0] * max(1, cell_width(ch[0])), CELL[1]), 0)
    ImageDraw.Draw(mask).text((0, 0), ch, font=_font(MONO_BOLD if bold else MONO, FONT_PX), fill=255)
    return mask
