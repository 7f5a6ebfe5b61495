"""The desktop adapter: LibreOffice on Xvfb and/or a sandboxed persistent shell over one
workspace of real files.

Variants (``EnvSpec.variant``, default ``hybrid``) pick the action set:

- ``gui``: xdotool clicks, drags, scrolls, typing and keys; observations are screenshots.
- ``terminal``: ``Action(type="bash", text=...)``; observations are the command's output
  (``Observation.text``) and a picture of the terminal window at that moment (prompt,
  commands, output, cursor: guiforge.envs.desktop.terminal_screen), in the task's terminal
  look (``presentation.terminal`` and its theme). No X server is started.
- ``hybrid``: both; observations carry the screenshot and the last command's output.

Final state (what verifiers read): ``FinalState.workspace`` is the workspace directory as
the agent left it, read straight from disk, so a GUI edit counts only if the agent saved
the document; ``FinalState.terminal`` is the command history
``[{command, output, exit_code, stdout, stderr, timed_out, notices, duration_s}]``. The
directory stays as it is until the next ``reset``, so evaluate before resetting (as
:meth:`guiforge.envs.manager.Lease.evaluate` does). Checks address files by
workspace-relative path, e.g. ``{"fn": "xlsx_cell_equals", "path": "report.xlsx", ...}``.

The task's files are described in :mod:`guiforge.envs.desktop.setup`.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from guiforge.envs.actions import Action, action_set
from guiforge.envs.base import (
    EnvFailure,
    Environment,
    EnvSpec,
    FinalState,
    Observation,
    StepResult,
    TaskSpec,
)
from guiforge.envs.desktop.ocr import ScreenText
from guiforge.envs.desktop.office import Office
from guiforge.envs.desktop.profile import theme_settings
from guiforge.envs.desktop.settle import QUIET_S, STATUS_S, Settled, settled_frame
from guiforge.envs.desktop.setup import DesktopSetup
from guiforge.envs.desktop.terminal_screen import DEFAULT_GRID, TerminalScreen
from guiforge.envs.desktop.xinput import xdotool_commands
from guiforge.envs.desktop.xserver import HELPER_WINDOW, XServer
from guiforge.envs.sandbox import (
    GiB,
    Limits,
    Sandbox,
    SandboxUser,
    ShellDied,
    ShellSession,
    Workspace,
)

DEFAULT_SCREEN = (1280, 720)
MAX_WAIT_S = 10.0
CLICKS = frozenset({"click", "double_click", "right_click", "drag"})
KEYBOARD = frozenset({"type", "key", "hotkey"})


class DesktopEnv(Environment):
    domain = "desktop"

    def __init__(self, spec: EnvSpec, *, limits: Limits | None = None, quota_bytes: int = GiB,
                 command_timeout_s: float = 30.0, launch_timeout_s: float = 20.0,
                 files_root: Path | None = None):
        super().__init__(spec)
        self.files_root = files_root  # where setup.files may read host files (None: nowhere)
        self.variant = spec.variant or "hybrid"
        self.actions = action_set("desktop", self.variant)
        self.width, self.height = spec.viewport or DEFAULT_SCREEN
        self.gui = self.variant in ("gui", "hybrid")
        self.terminal = self.variant in ("terminal", "hybrid")
        self.limits = limits or Limits()
        self.quota_bytes = quota_bytes
        self.command_timeout_s = command_timeout_s
        self.launch_timeout_s = launch_timeout_s
        self.history: list[dict[str, Any]] = []
        self.timings: dict[str, float] = {}  # the latest measured start/launch durations
        self.document: str | None = None
        self._dir: Path | None = None
        self._user: SandboxUser | None = None
        self.workspace: Workspace | None = None
        self.sandbox: Sandbox | None = None
        self.x: XServer | None = None
        self.office: Office | None = None
        self.shell: ShellSession | None = None
        self.screen: TerminalScreen | None = None  # the terminal window (the terminal variant's frames)
        self._last_output = ""
        self._known_windows: set[int] = set()
        self._ignored_windows: set[int] = set()  # LibreOffice's invisible helper window
        self._focused: int | None = None
        self.seq = 0  # resets and steps so far: each frame carries the one it follows
        self._settled: Settled | None = None  # the last settled screen
        self.style = "keyboard"  # the task's presentation.style: how its reference works the GUI

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        try:
            self._start()
        except BaseException:
            self.kill()  # no half-started Xvfb, mount or uid left behind
            raise

    def _start(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="guiforge-desktop-"))
        self._dir.chmod(0o755)  # the sandbox user must reach the workspace and profile below
        self._user = SandboxUser.acquire()
        self.workspace = Workspace(self._dir / "workspace", self._user, self.quota_bytes)
        self.sandbox = Sandbox(self.workspace, self.limits)
        if self.gui:
            started = time.monotonic()
            self.x = XServer(self.width, self.height, log_path=self._dir / "xvfb.log")
            self.x.start()
            self.timings["xvfb_start_s"] = time.monotonic() - started
            started = time.monotonic()
            self.office = Office(self.sandbox, self.x, self._dir / "profile", self.look())
            self.office.prepare()
            self.timings["profile_template_s"] = time.monotonic() - started

    def look(self) -> list[tuple[str, str, str]]:
        """LibreOffice's settings for the instance's theme (fixed with its profile template)."""
        if not self.spec.theme:
            return []

        return theme_settings(self.spec.theme)

    def reset(self, task: TaskSpec) -> Observation:
        if self.sandbox is None or self.workspace is None:
            raise EnvFailure("reset before start()")
        if task.domain != "desktop":
            raise ValueError(f"task {task.task_id} is for domain {task.domain!r}, not desktop")
        setup = DesktopSetup.from_task(task.setup, task.apps)
        files = setup.load_files(self.files_root)  # before tearing anything down: a bad spec changes nothing
        started = time.monotonic()
        self.seq += 1
        self._stop_episode()
        self.workspace.populate(files)
        self.answer = self.status = None
        self.history, self._last_output, self.document = [], "", setup.open
        self.screen = None
        self._known_windows, self._focused, self._settled = set(), None, None
        self.style = (task.presentation or {}).get("style") or "keyboard"
        if self.gui and setup.app is not None:
            assert self.office is not None and self.x is not None
            self.timings["launch_s"] = self.office.launch(setup.app, setup.open, self.launch_timeout_s)
            self.timings["window_s"] = self.office.window_s
            self.timings["launch_cpu_s"] = self.office.launch_cpu_s
            self._ignored_windows = set(self.x.visible_windows(HELPER_WINDOW))
            self._known_windows = set(self.x.visible_windows(".")) - self._ignored_windows
            if not self._known_windows:  # the first frame must show this episode's document
                raise EnvFailure(f"reset {task.task_id}: LibreOffice shows no window for {setup.open or setup.app}")
        if self.terminal:
            self.shell = ShellSession(self.sandbox)
            try:
                self.shell.start()
            except ShellDied as exc:
                raise EnvFailure(f"the sandbox shell did not start: {exc}") from exc
            if not self.gui:
                self.screen = terminal_window(task.presentation)
                self.screen.prompt(self.shell.cwd)
        obs = self._observation()
        self.timings["reset_s"] = time.monotonic() - started
        obs.feedback = "ready"
        return obs

    def _stop_episode(self) -> None:
        if self.office is not None:
            self.office.stop()
        if self.shell is not None:
            self.shell.close()
            self.shell = None
        if self.sandbox is not None:
            # anything the last episode left running (nohup, setsid); not the next LibreOffice
            self.sandbox.kill_all(keep=self.office.spare_pids if self.office else None)

    def processes(self) -> list[int]:
        """Xvfb, and bwrap's process of the episode's LibreOffice and shell (what runs in
        them is below it)."""
        procs = [getattr(self.x, "_proc", None),
                 *(getattr(getattr(owner, "_box", None), "proc", None) for owner in (self.office, self.shell))]
        return [p.pid for p in procs if p is not None]

    def healthy(self) -> bool:
        if self.sandbox is None:
            return False
        if self.gui and (self.x is None or not self.x.alive()):
            return False
        return not (self.office is not None and self.office.crashed())

    def _check_alive(self) -> None:
        if self.gui:
            if self.x is None or not self.x.alive():
                raise EnvFailure("the X server died mid-episode; the instance will be replaced")
            code = self.office.crashed() if self.office else None
            if code is not None:
                raise EnvFailure(f"LibreOffice died mid-episode (exit code {code}); the "
                                 "instance will be replaced")

    def close(self) -> None:
        self.kill()

    def kill(self) -> None:
        """Stop everything now; safe to call from another thread and more than once."""
        for stop in (
            lambda: self.office and self.office.close(),
            lambda: self.shell and self.shell.close(),
            lambda: self.sandbox and self.sandbox.kill_all(),
            lambda: self.x and self.x.close(),
            lambda: self.workspace and self.workspace.close(),
            lambda: self._user and self._user.release(),
        ):
            # best effort: one failed step must not leave the rest running
            with contextlib.suppress(Exception):
                stop()
        self.shell = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
        self.sandbox = None

    # -- observe / act -------------------------------------------------------------------
    def observe(self) -> Observation:
        return self._observation()

    def _update_focus(self, clicked: int | None = None) -> bool:
        """What a window manager would do (there is none): give the keyboard to a window
        that has just appeared (the "Keep current format" dialog) and to a window the agent
        clicks on. Otherwise X sends keys to the window under the pointer. True if it moved
        the focus."""
        assert self.x is not None
        windows = [w for w in self.x.visible_windows(".") if w not in self._ignored_windows]
        fresh = [w for w in windows if w not in self._known_windows]
        if self._focused not in windows:
            self._focused = None  # it closed: focus falls back to the pointer's window
        target = fresh[-1] if fresh else None
        if target is None and clicked in windows and self._focused not in (None, clicked):
            target = clicked
        if target is not None:
            self.x.focus(target)
            self._focused = target
        self._known_windows = set(windows)
        return target is not None

    def _observation(self, clicked: int | None = None, input_sent: bool = True) -> Observation:
        """The frame of the settled screen (guiforge.envs.desktop.settle), numbered with the
        last reset or step; a focus given to a new window settles again before the frame.
        ``input_sent=False``: nothing reached the screen since the last frame."""
        self._check_alive()
        obs = Observation(text=self._last_output if self.terminal else None, seq=self.seq)
        if self.gui:
            assert self.x is not None
            office = self.office if self.office is not None and self.office.running() else None
            quiet = QUIET_S if self.capture_screenshots else STATUS_S  # no frame kept: no caret to fix
            unchanged = None if input_sent else self._settled
            settled = settled_frame(self.x, office, quiet, unchanged=unchanged)
            if self._update_focus(clicked):
                settled = settled_frame(self.x, office, quiet)
            self._settled = settled
            frame = settled.frame
            shot = self.x.png(frame) if self.capture_screenshots else None
            obs.screenshot, obs.width, obs.height = shot, self.width, self.height
        elif self.screen is not None:
            obs.width, obs.height = self.screen.size
            obs.screenshot = self.screen.png() if self.capture_screenshots else None
        obs.debug = {"document": self.document, "variant": self.variant, "style": self.style}
        if self.gui and self.office is not None and self.office.running():
            # what a person reads: the windows' titles and boxes now, the text on request (OCR)
            obs.debug["windows"] = self._windows()
            obs.debug["screen"] = ScreenText(frame, self.width, self.height)
        return obs

    def _windows(self) -> list[dict[str, Any]]:
        """Visible LibreOffice windows, bottom to top: title and box (x, y, w, h) in pixels;
        the last is a dialog when one is open. One xdotool run: names, then geometries."""
        assert self.x is not None
        done = self.x.xdotool("search", "--onlyvisible", "--name", ".", "getwindowname", "%@",
                              "getwindowgeometry", "--shell", "%@", timeout_s=10)
        lines = done.stdout.splitlines()
        geometry = [i for i, line in enumerate(lines) if line.startswith("WINDOW=")]
        names = lines[:geometry[0]] if geometry else []
        out = []
        for name, start in zip(names, geometry, strict=False):
            geo = dict(line.split("=", 1) for line in lines[start:start + 6] if "=" in line)
            try:
                window, box = int(geo["WINDOW"]), [int(geo[k]) for k in ("X", "Y", "WIDTH", "HEIGHT")]
            except (KeyError, ValueError):
                continue
            if window not in self._ignored_windows and box[2] > 1 and box[3] > 1:
                out.append({"title": name, "box": box})
        return out

    def step(self, action: Action) -> StepResult:
        self.seq += 1
        try:
            action.check_domain("desktop", self.variant)
        except ValueError as exc:
            obs = self._observation(input_sent=False)
            return StepResult(obs, feedback=str(exc), error=str(exc))
        if action.type in ("answer", "terminate"):
            return self.finish(action)
        if action.type == "wait":
            time.sleep(min(float(action.amount or 1), MAX_WAIT_S))
            return StepResult(self._observation(), feedback="waited")
        if action.type == "bash":
            return self._bash(action.text or "")
        return self._gui(action)

    def _gui(self, action: Action) -> StepResult:
        self._check_alive()
        assert self.x is not None
        if action.type in KEYBOARD:
            self._update_focus()  # a dialog that appeared since the last look gets the keys
            self.x.keys.ensure(action.text or "".join(k for k in action.keys or [] if len(k) == 1))
        commands = xdotool_commands(action, self.width, self.height)
        if action.type in CLICKS:
            commands[-1] += ["getmouselocation", "--shell"]  # which window was clicked
        for args in commands:
            done = self.x.xdotool(*args)
            if done.returncode != 0:
                break
        if done.returncode != 0:
            self._check_alive()  # a dead X server is the environment's fault, not the agent's
            error = f"{action.type} failed: {done.stderr.strip()[-300:] or 'xdotool error'}"
            return StepResult(self._observation(), feedback=error, error=error)
        clicked = next((int(line[7:]) for line in done.stdout.splitlines()
                        if line.startswith("WINDOW=") and line[7:].isdigit()), None)
        obs = self._observation(clicked=clicked)
        obs.feedback = f"{action.type} done"
        return StepResult(obs, feedback=obs.feedback)

    def _bash(self, command: str) -> StepResult:
        if self.shell is None:
            raise EnvFailure("bash before reset()")
        try:
            result = self.shell.run(command, timeout_s=self.command_timeout_s)
        except ShellDied as exc:
            raise EnvFailure(f"the sandbox shell could not be restarted: {exc}") from exc
        output = result.stdout + result.stderr
        self.history.append({
            "command": command, "output": output, "exit_code": result.exit_code,
            "stdout": result.stdout, "stderr": result.stderr, "timed_out": result.timed_out,
            "notices": list(result.notices), "duration_s": round(result.duration_s, 4),
        })
        self._last_output = output
        if self.screen is not None:
            self.screen.command(command, output, self.shell.cwd)
        obs = self._observation(input_sent=False)
        obs.feedback = result.summary()
        error = None
        if not result.ok:
            tail = result.stderr.strip()[-500:]
            error = result.summary() + (f": {tail}" if tail else "")
        return StepResult(obs, feedback=obs.feedback, error=error)

    def state_stamp(self) -> str | None:
        """The workspace files' names, sizes, inodes and mtimes, the terminal's history and
        the answer: what the verifier reads. None while LibreOffice is busy (a save may be
        landing: the whole state is read after it, as :meth:`final_state` waits)."""
        if self.workspace is None or (self.office is not None and self.office.busy()):
            return None
        try:
            files = sorted((str(p.relative_to(self.workspace.path)), st.st_size, st.st_ino, st.st_mtime_ns)
                           for p in self.workspace.path.rglob("*") if p.is_file() and (st := p.stat()))
        except OSError:  # a file went away meanwhile (a lock file): read the whole state
            return None
        running = self.office.running() if self.office else False
        return repr((files, len(self.history), self.answer, self.status, running, self.document))

    def final_state(self) -> FinalState:
        if self.workspace is None:
            raise EnvFailure("final_state before start()")
        if self.office is not None:
            # a save the agent started must land before anything reads the file
            self.office.wait_idle(quiet_s=0.3)
        running = self.office.running() if self.office else False
        return FinalState(
            apps={"desktop": {"variant": self.variant, "document": self.document,
                              "office_running": running}},
            workspace=self.workspace.path, answer=self.answer, status=self.status,
            terminal=list(self.history), initial_files=self.workspace.initial)


def terminal_window(presentation: dict[str, Any] | None) -> TerminalScreen:
    """A fresh terminal window in the task's look (``presentation.terminal``'s columns and
    rows, its theme's palette); a task drawn before terminals had looks gets 80x24."""
    look = presentation or {}
    grid = look.get("terminal") or {}
    return TerminalScreen(int(grid.get("cols") or DEFAULT_GRID[0]), int(grid.get("rows") or DEFAULT_GRID[1]),
                          (look.get("theme") or {}).get("name"))
