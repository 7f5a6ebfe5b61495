"""Xvfb on a free display, screenshots of it, and its input via xdotool.

``-displayfd`` lets Xvfb pick a free display itself and tells us which once it accepts
connections, so there is no race between instances and no polling for readiness.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import select
import subprocess
import threading
import time
from pathlib import Path

from PIL import Image

from guiforge.envs.base import EnvFailure
from guiforge.envs.desktop.keymap import Keymap


class XServer:
    def __init__(self, width: int, height: int, log_path: Path | None = None):
        self.width, self.height = width, height
        self.log_path = log_path
        self.display: int | None = None
        self._proc: subprocess.Popen | None = None
        self._displayfd: int | None = None
        self._grabber = None  # mss instance, bound to the thread that made it
        self._grabber_thread: int | None = None
        self.keys = Keymap(self.env)  # keys for the characters the map lacks

    @property
    def name(self) -> str:
        return f":{self.display}"

    @property
    def socket(self) -> Path:
        return Path(f"/tmp/.X11-unix/X{self.display}")

    def start(self, timeout_s: float = 15.0) -> None:
        read_fd, write_fd = os.pipe()
        log = open(self.log_path, "wb") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        try:
            # setpriv --pdeathsig: Xvfb dies with the thread that started it, even on a crash
            self._proc = subprocess.Popen(
                ["setpriv", "--pdeathsig", "KILL", "--", "Xvfb", "-displayfd", str(write_fd), "-screen", "0",
                 f"{self.width}x{self.height}x24", "-nolisten", "tcp", "-noreset",
                 "-s", "0", "-dpms",  # no screensaver blanking the screen mid-episode
                 # no auto-repeat: a key whose release arrives late on a busy machine
                 # must not type itself again and again
                 "-r"],
                pass_fds=(write_fd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=log, start_new_session=True)
        finally:
            os.close(write_fd)
            if log is not subprocess.DEVNULL:
                log.close()
        # the read end stays open while Xvfb lives: Xvfb treats a closed pipe as fatal
        self._displayfd = read_fd
        ready, _, _ = select.select([read_fd], [], [], timeout_s)
        text = os.read(read_fd, 64).decode().strip() if ready else ""
        if not text.isdigit():
            err = self._stop_and_read_errors()
            raise EnvFailure(f"Xvfb did not start within {timeout_s:.0f}s ({err}); "
                             "is the xvfb package installed?")
        self.display = int(text)

    def _stop_and_read_errors(self) -> str:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait(timeout=5)
        return self.log_tail()

    def log_tail(self) -> str:
        if self.log_path is None:
            return "no log kept"
        try:
            return self.log_path.read_text(errors="replace").strip()[-300:] or "no output"
        except OSError:
            return "no log"

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _require_alive(self) -> None:
        if not self.alive():
            code = self._proc.returncode if self._proc else None
            raise EnvFailure(f"the X server {self.name} is gone (exit code {code}: "
                             f"{self.log_tail()}); the instance will be replaced")

    def env(self) -> dict[str, str]:
        return {**os.environ, "DISPLAY": self.name}

    # -- screenshots ---------------------------------------------------------------------
    def busy(self) -> bool:
        """Whether Xvfb is running or waiting for a CPU: it has requests to handle, drawing a
        client sent that is not on the screen yet (guiforge.envs.desktop.settle)."""
        if self._proc is None:
            return False
        pid = self._proc.pid
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return False  # gone: the next grab says so
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                    if f.read().rpartition(b")")[2].split()[0] == b"R":
                        return True
            except (OSError, IndexError):
                continue
        return False

    def grab(self) -> bytes:
        """The screen as raw BGRA bytes."""
        # heavy: mss, imported when this runs
        import mss

        self._require_alive()
        if self._grabber is None or self._grabber_thread != threading.get_ident():
            self._grabber = mss.MSS(display=self.name)
            self._grabber_thread = threading.get_ident()
        try:
            shot = self._grabber.grab({"left": 0, "top": 0, "width": self.width, "height": self.height})
        except Exception as exc:
            raise EnvFailure(f"screenshot of {self.name} failed: {exc}") from exc
        return bytes(shot.bgra)

    def png(self, bgra: bytes) -> bytes:
        image = Image.frombytes("RGB", (self.width, self.height), bgra, "raw", "BGRX")
        out = io.BytesIO()
        image.save(out, format="PNG", compress_level=1)  # level 1: 4x faster, ~20% larger
        return out.getvalue()

    def wait_for_content(self, timeout_s: float = 10.0, min_colors: int = 12) -> bytes:
        """Wait until the screen shows more than a flat background: a window that has
        been mapped but not yet painted is one colour."""
        until = time.monotonic() + timeout_s
        while True:
            frame = self.grab()
            if len(set(frame[::4 * 997])) >= min_colors or time.monotonic() > until:
                return frame
            time.sleep(0.02)

    # -- input ---------------------------------------------------------------------------
    def xdotool(self, *args: str, timeout_s: float = 30.0) -> subprocess.CompletedProcess:
        self._require_alive()
        try:
            return subprocess.run(["xdotool", *args], env=self.env(), capture_output=True,
                                  text=True, timeout=timeout_s, start_new_session=True)
        except subprocess.TimeoutExpired:
            raise EnvFailure(f"xdotool {args[0]} hung for {timeout_s:.0f}s on {self.name}") from None

    def visible_windows(self, name_regex: str) -> list[int]:
        done = self.xdotool("search", "--onlyvisible", "--name", name_regex, timeout_s=10)
        return [int(w) for w in done.stdout.split() if w.isdigit()]

    def focus(self, window: int) -> None:
        self.xdotool("windowfocus", str(window), timeout_s=10)

    def window_names(self) -> list[str]:
        """Titles of every visible named window (for debugging and dialogs)."""
        done = self.xdotool("search", "--onlyvisible", "--name", ".", "getwindowname", "%@",
                            timeout_s=10)
        return [line for line in done.stdout.splitlines() if line and not _IGNORED.match(line)]

    def close(self) -> None:
        if self._grabber is not None:
            with contextlib.suppress(Exception):
                self._grabber.close()
            self._grabber = None
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)
        if self._displayfd is not None:
            os.close(self._displayfd)
            self._displayfd = None
        if self.display is not None:
            # a killed Xvfb leaves its lock and socket behind
            for stale in (Path(f"/tmp/.X{self.display}-lock"), self.socket):
                with contextlib.suppress(OSError):
                    stale.unlink()


HELPER_WINDOW = "^VCL ImplGetDefaultWindow$"  # mapped by LibreOffice, never shown or focused
_IGNORED = re.compile(HELPER_WINDOW)
