"""The terminal window's picture (guiforge/envs/desktop/terminal_screen.py) on small real
sessions: wrapping at the column width, long output scrolled to the bottom, the prompt and
the cursor where bash leaves them, the theme's colours, and the same bytes for the same
session."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from guiforge.envs.base import EnvFailure
from guiforge.envs.desktop import terminal_screen
from guiforge.envs.desktop.terminal_screen import (
    CELL,
    PAD,
    PALETTES,
    TITLE_H,
    TerminalScreen,
    clean,
)
from guiforge.presentation import TERMINAL_THEMES


def _text(screen: TerminalScreen) -> list[str]:
    shown, _ = screen.visible()
    return ["".join(ch for ch, _, _ in line) for line in shown]


def _cell(img: Image.Image, col: int, row: int) -> set[tuple[int, int, int]]:
    """The colours in one character cell of the grid."""
    x, y = PAD + col * CELL[0], TITLE_H + PAD + row * CELL[1]
    return {colour for _, colour in img.crop((x, y, x + CELL[0], y + CELL[1])).getcolors(CELL[0] * CELL[1])}


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def test_commands_and_output_wrap_at_the_column_width():
    s = TerminalScreen(cols=24, rows=8)
    s.prompt("/workspace")
    s.command("cd data", "", "/workspace/data")
    s.command("echo " + "x" * 30, "x" * 30 + "\n", "/workspace/data")
    s.command("printf 'a\\tb'", "a\tb", "/tmp")  # no final newline: the prompt follows on its line
    assert _text(s) == [  # eight rows: the first command has scrolled off the top
        "ho xxxxxxxxxxxxxxxxxxxxx",  # "echo" wrapped where the window ends, as it was typed
        "xxxxxxxxx",
        "xxxxxxxxxxxxxxxxxxxxxxxx",
        "xxxxxx",
        "agent@sandbox:~/data$ pr",
        "intf 'a\\tb'",
        "a       bagent@sandbox:/",  # a tab to column 8, and bash's prompt after unended output
        "tmp$ ",
    ]
    s = TerminalScreen(cols=40, rows=4)  # a here-document: bash's "> " before each line typed after the first
    s.prompt("/workspace")
    s.command("python3 - <<'PY'\nprint(6 * 7)\nPY\n", "42\n", "/workspace")
    assert _text(s) == ["> print(6 * 7)", "> PY", "42", "agent@sandbox:~$ "]
    s = TerminalScreen(cols=10, rows=4)
    s.prompt("/workspace")
    s.command("cat wide.txt", "日本語テキスト\n", "/workspace")
    assert _text(s) == ["日本語テキ", "スト", "agent@sand", "box:~$ "]  # wide: two cells each


def test_long_output_is_scrolled_to_its_end_with_the_cursor_on_the_last_prompt():
    s = TerminalScreen(cols=40, rows=6)
    s.prompt("/workspace")
    s.command("seq 1 200", "".join(f"{i}\n" for i in range(1, 201)), "/workspace")
    shown = _text(s)
    assert shown == ["196", "197", "198", "199", "200", "agent@sandbox:~$ "]
    _, cursor = s.visible()
    assert cursor == (len("agent@sandbox:~$ "), 5)
    # a fresh window starts at the top: one prompt, the cursor after it on the first row
    fresh = TerminalScreen(cols=40, rows=6)
    fresh.prompt("/workspace/reports")
    assert _text(fresh) == ["agent@sandbox:~/reports$ "] and fresh.visible()[1] == (25, 0)


def test_prompt_cursor_and_theme_are_drawn_in_the_palettes_colours():
    for theme in ("terminal-aubergine", "terminal-solarized-light"):
        pal = PALETTES[theme]
        s = TerminalScreen(cols=30, rows=5, theme=theme)
        s.prompt("/workspace")
        s.command("ls", "a.csv\n", "/workspace")
        img = Image.open(io.BytesIO(s.png())).convert("RGB")
        assert img.size == s.size == (2 * PAD + 30 * CELL[0], TITLE_H + 2 * PAD + 5 * CELL[1])
        assert _rgb(pal.user) in _cell(img, 0, 0)  # "a" of agent@sandbox in the prompt's colour
        assert _rgb(pal.path) in _cell(img, 14, 0)  # the "~"
        assert _rgb(pal.text) in _cell(img, 0, 1)  # "a" of a.csv
        assert _cell(img, 17, 2) == {_rgb(pal.cursor)}  # a block cursor after "agent@sandbox:~$ "
        assert _cell(img, 18, 2) == {_rgb(pal.background)} == _cell(img, 0, 4)
        assert img.getpixel((1, 1)) == _rgb(pal.bar)
    assert set(PALETTES) == {t.name for t in TERMINAL_THEMES}  # every theme a task may draw has colours
    other = TerminalScreen(cols=30, rows=5, theme="no-such-theme")  # an old task: the default look
    assert other.palette == PALETTES["terminal-aubergine"]


def test_the_same_session_gives_the_same_bytes():
    def session(last: str) -> bytes:
        s = TerminalScreen(cols=80, rows=24, theme="terminal-tango-dark")
        s.prompt("/workspace")
        s.command("ls -l", "-rw-r--r-- 1 agent agent 31 Jan  1 00:00 sales.csv\n", "/workspace")
        s.command(last, "name,amount\nalice,10\n", "/workspace")
        return s.png()

    assert session("cat sales.csv") == session("cat sales.csv")
    assert session("cat sales.csv") != session("cat  sales.csv")


def test_escapes_and_carriage_returns_show_as_a_terminal_leaves_them():
    assert clean("\x1b[1;32mok\x1b[0m\r\n") == "ok\n"
    assert clean("progress 10%\rprogress 100%\ndone\x07") == "progress 100%\ndone"


def test_a_missing_font_is_one_line_naming_the_file_and_the_package(monkeypatch, tmp_path):
    monkeypatch.setattr(terminal_screen, "FONT_DIR", tmp_path)  # not there, nor in the system's font folders
    monkeypatch.setattr(terminal_screen, "TITLE_FONT", "DejaVuSans-Missing.ttf")
    terminal_screen._font.cache_clear()
    try:
        with pytest.raises(EnvFailure, match=r"DejaVuSans-Missing.ttf: .*fonts-dejavu-core") as err:
            TerminalScreen().png()
        assert str(tmp_path) in str(err.value) and "\n" not in str(err.value)
    finally:
        terminal_screen._font.cache_clear()
