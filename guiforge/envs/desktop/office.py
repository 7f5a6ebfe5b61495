"""LibreOffice in the sandbox, drawn on our X server.

``soffice.bin`` runs directly (no ``oosplash`` launcher, so killing it needs no process
hunt) inside bubblewrap with the same view as the terminal: ``/workspace`` writable, the
rest of the system read-only or absent, so its file dialogs cannot browse the host either.
It reaches the X server only through its socket file (the sandbox has no network, which
also hides X's abstract socket). Each episode gets a fresh copy of the template profile.

A reset does not wait for a cold start: while an episode runs, the next episode's
LibreOffice (its own sandbox, its own fresh profile) starts with no document, and the reset
hands it the document over LibreOffice's single-instance pipe (see ``launcher.py``). Every
episode still gets a new process and a clean profile; only the start-up has moved.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import subprocess
import threading
import time
from dataclasses import replace
from pathlib import Path, PurePosixPath

from guiforge.envs.base import EnvFailure
from guiforge.envs.desktop.profile import SOFFICE, copy_profile, ensure_template
from guiforge.envs.desktop.setup import App
from guiforge.envs.desktop.xserver import XServer
from guiforge.envs.sandbox import GUI_LIMITS, Bind, MiB, Sandbox
from guiforge.envs.sandbox.bwrap import WORKDIR, Spawned

PROFILE_MOUNT = "/profile"
APP_FLAGS = {"calc": "--calc", "impress": "--impress", "writer": "--writer"}
APP_TITLES = {"calc": "LibreOffice Calc", "impress": "LibreOffice Impress",
              "writer": "LibreOffice Writer"}
ANY_DOCUMENT = "^.+ - LibreOffice( [A-Za-z/]+)?$"
# a CSV opened by name skips the import dialog: comma-separated, double quotes, UTF-8
CSV_FILTER = "--infilter=CSV:44,34,76,1"
TSV_FILTER = "--infilter=CSV:9,34,76,1"
GUI_TMP = 256 * MiB  # LibreOffice writes temporary copies of documents while saving
LAUNCHER = Path(__file__).with_name("launcher.py")
SYSTEM_PYTHON = Path("/usr/bin/python3")  # the sandbox sees /usr, not our venv


class Office:
    def __init__(self, sandbox: Sandbox, x: XServer, profile_dir: Path, theme: list[tuple[str, str, str]] = ()):
        self.sandbox, self.x, self.profile_dir = sandbox, x, profile_dir
        self.theme = list(theme)  # registry settings of the look (profile.theme_settings)
        self.log_path = profile_dir.parent / f"{profile_dir.name}.log"
        self.template: Path | None = None
        self._box: Spawned | None = None
        self._spare: Spawned | None = None  # the next episode's LibreOffice, started early
        self._in_use: dict[int, Path] = {}  # id(box) -> its profile directory
        self._profiles = (profile_dir, profile_dir.with_name(profile_dir.name + "-next"))
        self.window_s = 0.0  # the last launch: until the window was mapped
        self.launch_cpu_s = 0.0
        self.warm = False  # whether the last launch used the spare
        self.use_spare = SYSTEM_PYTHON.exists()

    def prepare(self) -> None:
        """Build (once per machine) or find the warmed-up template profile."""
        self.template = ensure_template(self.x.width, self.x.height, self._warm_up, self.theme)

    def _spawn(self, profile: Path, args: list[str], launcher: bool = False) -> Spawned:
        binds = [Bind(self.x.socket, str(self.x.socket), writable=True),
                 Bind(profile, PROFILE_MOUNT, writable=True)]
        if Path("/var/cache/fontconfig").is_dir():
            binds.append(Bind(Path("/var/cache/fontconfig"), "/var/cache/fontconfig"))
        command = [str(SOFFICE), f"-env:UserInstallation=file://{PROFILE_MOUNT}", "--norestore",
                   "--nologo", "--nolockcheck", *args]
        pipes = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL}
        if launcher:
            command = [str(SYSTEM_PYTHON), "-I", "-c", LAUNCHER.read_text(), *command]
            pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE}
        with self._log(append=launcher) as log:
            return self.sandbox.spawn(
                command, binds=binds, limits=replace(GUI_LIMITS, tmp_bytes=GUI_TMP),
                # HOME in the private /tmp: dconf and fontconfig caches stay out of the workspace
                env={"DISPLAY": self.x.name, "SAL_USE_VCLPLUGIN": "gen", "HOME": "/tmp"},
                stderr=log, **pipes)

    def _log(self, append: bool = False):
        """LibreOffice's and bwrap's stderr, truncated per cold launch, quoted in errors."""
        return open(self.log_path, "ab" if append else "wb")

    def log_tail(self) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip()
        except OSError:
            return "no log"
        return text[-400:] or "no output"

    def _warm_up(self, profile: Path) -> None:
        """Initialise a new profile: the headless start that creates it (it exits with 81,
        'restart me'), then one GUI start per app so their first-start work is done."""
        if os.geteuid() == 0:
            for root, dirs, files in os.walk(profile):
                for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
                    os.lchown(name, self.sandbox.user.uid, self.sandbox.user.gid)
        for _ in range(3):
            box = self._spawn(profile, ["--headless", "--terminate_after_init"])
            if box.proc.wait(timeout=120) == 0:
                break
        else:
            raise EnvFailure(f"LibreOffice could not initialise a profile in {profile} "
                             f"(exit code {box.proc.returncode}): {self.log_tail()}")
        for app in APP_FLAGS:
            box = self._spawn(profile, [APP_FLAGS[app]])
            try:
                title = f"Untitled 1 - {APP_TITLES[app]}"
                self._wait_for(box, title, timeout_s=60)
                self.x.wait_for_content(timeout_s=30)
                time.sleep(1.0)  # first-start work (render self-tests, caches) runs when idle
                self._quit_through_ui(box, title)
            finally:
                box.kill()

    def _quit_through_ui(self, box: Spawned, title: str, timeout_s: float = 60.0) -> None:
        """Ctrl+Q, repeated until LibreOffice exits: quitting (not killing) makes it write
        its profile; a busy LibreOffice may miss the first keystroke."""
        until = time.monotonic() + timeout_s
        while box.alive() and time.monotonic() < until:
            if self.x.visible_windows("^" + re.escape(title) + "$"):
                self.x.xdotool("search", "--onlyvisible", "--name", "^" + re.escape(title) + "$",
                               "windowfocus", "key", "ctrl+q")
            with contextlib.suppress(subprocess.TimeoutExpired):
                box.proc.wait(timeout=3)
        if box.alive():
            raise EnvFailure(f"LibreOffice did not quit during the profile warm-up "
                             f"(windows: {self.x.window_names()})")

    # -- per episode ---------------------------------------------------------------------
    def launch(self, app: App, document: str | None, timeout_s: float = 30.0) -> float:
        """Start LibreOffice on ``document`` (workspace-relative) or a new ``app`` document
        and wait until its window shows; returns the seconds that took."""
        if self.template is None:
            raise EnvFailure("Office.launch before prepare()")
        self.stop()
        started = time.monotonic()
        for stale in self.sandbox.workspace.path.rglob(".~lock.*"):
            stale.unlink()
        if document is None:
            args, title = [APP_FLAGS[app]], f"Untitled 1 - {APP_TITLES[app]}"
        else:
            suffix = PurePosixPath(document).suffix.lower()
            filters = {".csv": [CSV_FILTER], ".tsv": [TSV_FILTER]}.get(suffix, [])
            args = [*filters, f"{WORKDIR}/{document}"]
            # any document window: LibreOffice may title it from the file's metadata, or
            # open it in another module than the suffix suggests (.html -> Writer/Web)
            title = ANY_DOCUMENT
        self._box = self._hand_to_spare(args, timeout_s)
        self.warm = self._box is not None
        if self._box is None:
            profile = self._free_profile()
            copy_profile(self.template, profile, self.sandbox.user.uid, self.sandbox.user.gid)
            self._box = self._spawn(profile, args)
            self._in_use[id(self._box)] = profile
        self._wait_for(self._box, title, timeout_s)
        self.window_s = time.monotonic() - started
        self.x.wait_for_content(timeout_s=max(1.0, timeout_s - (time.monotonic() - started)))
        # CPU seconds LibreOffice needed to get here: the wall time on an idle machine
        self.launch_cpu_s = self.cpu_ticks() / os.sysconf("SC_CLK_TCK")
        elapsed = time.monotonic() - started
        self._start_spare()
        return elapsed

    # -- the spare: the next episode's LibreOffice -------------------------------------------

    def _free_profile(self) -> Path:
        """The profile directory the running LibreOffice does not use."""
        busy = {self._in_use.get(id(box)) for box in (self._box, self._spare) if box is not None}
        return next(p for p in self._profiles if p not in busy)

    def _start_spare(self) -> None:
        if not self.use_spare or self._spare is not None:
            return
        profile = self._free_profile()
        try:
            copy_profile(self.template, profile, self.sandbox.user.uid, self.sandbox.user.gid)
            spare = self._spawn(profile, ["--nodefault"], launcher=True)
        except (OSError, RuntimeError):
            self.use_spare = False  # cold starts still work
            return
        self._in_use[id(spare)] = profile
        self._spare = spare

    def _hand_to_spare(self, args: list[str], timeout_s: float) -> Spawned | None:
        """Give the document to the waiting LibreOffice; None if there is none or it failed
        (the caller then starts one cold)."""
        spare, self._spare = self._spare, None
        if spare is None:
            return None
        try:
            if self._read_line(spare, timeout_s) == "ready":
                spare.proc.stdin.write((json.dumps(args) + "\n").encode())
                spare.proc.stdin.flush()
                if self._read_line(spare, timeout_s) == "opened":
                    return spare
        except OSError:
            pass
        self._in_use.pop(id(spare), None)
        spare.kill()
        return None

    @staticmethod
    def _read_line(box: Spawned, timeout_s: float) -> str:
        stream = box.proc.stdout
        ready, _, _ = select.select([stream], [], [], timeout_s)
        return stream.readline().decode(errors="replace").strip() if ready else ""

    def spare_pids(self) -> list[int]:
        """Processes of the waiting LibreOffice (a reset must not kill them)."""
        spare = self._spare
        return [spare.proc.pid, *spare.pids()] if spare is not None else []

    def _wait_for(self, box: Spawned, title: str, timeout_s: float) -> None:
        """Wait for the window; ``timeout_s`` is LibreOffice's own time (wall time less the
        time it waited for a CPU), so a loaded machine does not fail a start that is merely
        slow."""
        pattern = title if title == ANY_DOCUMENT else "^" + re.escape(title) + "$"
        started, waited = time.monotonic(), self.waited_s(box)
        while (time.monotonic() - started) - (self.waited_s(box) - waited) < timeout_s:
            if not box.alive():
                raise EnvFailure(f"LibreOffice exited with code {box.proc.returncode} before its "
                                 f"window {title!r} showed: {self.log_tail()}")
            if self.x.visible_windows(pattern):
                return
            time.sleep(0.02)
        shown = self.x.window_names()
        raise EnvFailure(f"LibreOffice window {title!r} did not show within {timeout_s:.0f}s of its own time "
                         f"(visible: {shown}); a dialog may be blocking it")

    def cpu_ticks(self) -> int:
        """CPU time (clock ticks) used so far by everything in LibreOffice's sandbox."""
        total = 0
        for pid in self._box.tree_pids() if self._box else []:
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    fields = f.read().rpartition(b")")[2].split()
                total += int(fields[11]) + int(fields[12])  # utime + stime
            except (OSError, IndexError, ValueError):
                continue
        return total

    def saving(self) -> bool:
        """LibreOffice saves into a temporary ``lu*.tmp`` next to the document, then
        renames it over the document: while one exists, the file on disk is the old one."""
        return any(self.sandbox.workspace.path.rglob("lu*.tmp"))

    def _threads(self) -> list[str]:
        """/proc/<pid>/task/<tid> of every thread in LibreOffice's sandbox."""
        out = []
        for pid in self._box.tree_pids() if self._box else []:
            try:
                out.extend(f"/proc/{pid}/task/{tid}" for tid in os.listdir(f"/proc/{pid}/task"))
            except OSError:
                continue  # gone meanwhile
        return out

    def busy(self) -> bool:
        """Whether a LibreOffice thread is running or waiting for a CPU (a due timer, input
        not handled yet), or a save is under way."""
        for task in self._threads():
            try:
                with open(f"{task}/stat", "rb") as f:
                    if f.read().rpartition(b")")[2].split()[0] == b"R":
                        return True
            except (OSError, IndexError):
                continue
        return self.saving()

    def waited_s(self, box: Spawned | None = None) -> float:
        """Seconds LibreOffice's main thread (the one that handles input and draws) has spent
        waiting for a CPU (its run delay, /proc schedstat): what a loaded machine adds to its
        wall time. ``box``: another LibreOffice than the episode's (a warm-up)."""
        box = box or self._box
        for pid in box.tree_pids() if box else []:
            try:
                with open(f"/proc/{pid}/comm", "rb") as f:
                    if f.read().strip() != b"soffice.bin":
                        continue
                with open(f"/proc/{pid}/schedstat", "rb") as f:
                    return int(f.read().split()[1]) / 1e9
            except (OSError, IndexError, ValueError):
                continue
        return 0.0

    def wait_idle(self, quiet_s: float = 0.2, budget_s: float = 20.0) -> None:
        """Wait until LibreOffice has been idle (:meth:`busy`) for ``quiet_s``; EnvFailure
        when it is still busy after ``budget_s`` of its own time (wall time less the time it
        waited for a CPU, so a loaded machine stretches the bound)."""
        if not self.running():
            return
        started, waited = time.monotonic(), self.waited_s()
        quiet_since = started
        tick = threading.Event()
        while True:
            now = time.monotonic()
            if self.busy():
                quiet_since = now
            elif now - quiet_since >= quiet_s:
                return
            if (now - started) - (self.waited_s() - waited) > budget_s:
                raise EnvFailure(f"LibreOffice stayed busy for {budget_s:.0f}s of its own time"
                                 f"{' (still saving)' if self.saving() else ''}")
            tick.wait(0.05)

    def running(self) -> bool:
        return self._box is not None and self._box.alive()

    def crashed(self) -> int | None:
        """The exit code if LibreOffice died on its own (a signal or an error), else None.
        Exit code 0 means the agent closed it, which is not a fault."""
        if self._box is None:
            return None
        code = self._box.proc.poll()
        return code if code not in (None, 0) else None

    def stop(self) -> None:
        """Kill LibreOffice and everything it started; returns once they are gone, so no
        window of this episode outlives it."""
        box, self._box = self._box, None
        if box is not None:
            self._in_use.pop(id(box), None)
            box.kill()

    def close(self) -> None:
        """Stop LibreOffice and the spare, and remove their profiles."""
        self.stop()
        spare, self._spare = self._spare, None
        if spare is not None:
            self._in_use.pop(id(spare), None)
            spare.kill()
        for profile in self._profiles:
            shutil.rmtree(profile, ignore_errors=True)
