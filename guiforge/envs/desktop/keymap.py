"""Keys for the characters the X keyboard map lacks (é, ó, ł, €, ...), bound for good.

``xdotool type`` types a character the keyboard map lacks by binding it to a scratch
keycode, pressing that key, and unbinding it a few milliseconds later. An application that
reads the map after the unbinding (LibreOffice on a busy machine) sees a key with no symbol
and drops or mistypes the character: "Józwik" became "Jzwik" in 2 of 5 runs of a Calc gate
here. Binding each such character to a spare keycode of its own before it is typed, and
leaving it bound, removes the race: every later look at the map finds it.

Spare keycodes are the ones Xvfb's map leaves empty or gives to multimedia keys (``XF86*``)
that no task presses. Without ``xmodmap`` (Debian's x11-xserver-utils), or once the spare
keycodes run out, xdotool's own scratch binding still types the character.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable

XMODMAP = "xmodmap"


def _needs_key(ch: str) -> bool:
    return ord(ch) > 0x7E  # ASCII is on Xvfb's default map


class Keymap:
    def __init__(self, env: Callable[[], dict[str, str]]):
        self.env = env  # DISPLAY for the X server
        self.bound: dict[str, int] = {}
        self._spare: list[int] | None = None
        self.available = shutil.which(XMODMAP) is not None

    def _read_spare(self) -> list[int]:
        done = subprocess.run([XMODMAP, "-pke"], env=self.env(), capture_output=True, text=True, timeout=10,
                              start_new_session=True)
        spare = []
        for line in done.stdout.splitlines():
            head, _, syms = line.partition("=")
            parts = head.split()
            if len(parts) != 2 or parts[0] != "keycode" or not parts[1].isdigit():
                continue
            names = [s for s in syms.split() if s != "NoSymbol"]
            if all(s.startswith("XF86") for s in names):  # empty, or a multimedia key
                spare.append(int(parts[1]))
        return spare

    def ensure(self, text: str) -> None:
        """Bind every character of ``text`` that has no key yet to a spare keycode."""
        missing = sorted({ch for ch in text if _needs_key(ch) and ch not in self.bound})
        if not missing or not self.available:
            return
        if self._spare is None:
            self._spare = self._read_spare()
        fresh: dict[str, int] = {}
        for ch in missing:
            if not self._spare:
                break  # xdotool's scratch binding types the rest
            fresh[ch] = self._spare.pop(0)
        if not fresh:
            return
        expressions = []
        for ch, keycode in fresh.items():
            sym = f"U{ord(ch):04X}"
            expressions += ["-e", f"keycode {keycode} = {sym} {sym}"]  # the same symbol with or without Shift
        done = subprocess.run([XMODMAP, *expressions], env=self.env(), capture_output=True, timeout=10,
                              start_new_session=True)
        if done.returncode == 0:  # else xdotool's scratch binding still types them
            self.bound |= fresh
