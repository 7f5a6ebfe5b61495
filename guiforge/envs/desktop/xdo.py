"""The desktop's input channel: xdotool's own library (libxdo) in process.

``xdotool`` is a thin command line over libxdo, and a process per action cost a quarter of a
desktop step's CPU. :class:`Xdo` calls the same library functions the ``xdotool`` input
commands call, with the same arguments, so an action types, clicks and waits as before
(window searches still run the command: guiforge.envs.desktop.xserver says why).

One X connection per command chain, closed when it is done, as each ``xdotool`` process's
was: a connection kept open across episodes changed what LibreOffice drew first (a Writer
document handed to the spare LibreOffice settled on a frame with its page still black).
Opening one costs about a millisecond; each reads the keyboard map afresh, so keys that
:class:`guiforge.envs.desktop.keymap.Keymap` bound since are known, and no connection is
shared between threads (Xlib's are not thread-safe).

Two calls differ from the command's: a click does not wait its delay after the last click
(:meth:`Xdo.click`), and the window under the pointer is read without libxdo's unsafe
client search (:meth:`Xdo.pointer`).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from guiforge.envs.base import EnvFailure

CURRENTWINDOW = 0
_Window = ctypes.c_ulong


def _load(name: str, soname: str) -> ctypes.CDLL:
    """The library by its soname, else wherever find_library finds it (which runs ldconfig)."""
    try:
        return ctypes.CDLL(soname)
    except OSError:
        pass
    try:
        return ctypes.CDLL(ctypes.util.find_library(name) or soname)
    except OSError as exc:
        raise EnvFailure(f"cannot load {soname} ({exc}); is the xdotool package installed?") from None


_libs: tuple[ctypes.CDLL, ctypes.CDLL] | None = None
_libs_lock = threading.Lock()


def _libraries() -> tuple[ctypes.CDLL, ctypes.CDLL]:
    """libX11 and libxdo, their signatures declared once."""
    global _libs
    with _libs_lock:
        if _libs is None:
            x11, xdo = _load("X11", "libX11.so.6"), _load("xdo", "libxdo.so.3")
            p, i, u, w = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, _Window
            for fn, args, res in (
                (x11.XSync, [p, i], i), (x11.XDefaultRootWindow, [p], w), (x11.XFree, [p], i),
                (x11.XQueryPointer, [p, w, ctypes.POINTER(w), ctypes.POINTER(w), ctypes.POINTER(i),
                                     ctypes.POINTER(i), ctypes.POINTER(i), ctypes.POINTER(i), ctypes.POINTER(u)], i),
                (x11.XSetErrorHandler, [p], p), (x11.XSetIOErrorHandler, [p], p),
                (x11.XSetIOErrorExitHandler, [p, p, p], None),
                (xdo.xdo_new, [ctypes.c_char_p], p), (xdo.xdo_free, [p], None),
                (xdo.xdo_move_mouse, [p, i, i, i], i), (xdo.xdo_mouse_down, [p, w, i], i),
                (xdo.xdo_mouse_up, [p, w, i], i),
                (xdo.xdo_click_window_multiple, [p, w, i, i, u], i),
                (xdo.xdo_click_window, [p, w, i], i),
                (xdo.xdo_enter_text_window, [p, w, ctypes.c_char_p, u], i),
                (xdo.xdo_send_keysequence_window, [p, w, ctypes.c_char_p, u], i),
            ):
                fn.argtypes, fn.restype = args, res
            # A window that closes while it is looked at raises BadWindow; Xlib's default
            # handler would exit the process. Ignore X errors: the call reports failure.
            handler_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
            _ignore_errors.append(handler_type(lambda _display, _event: 0))
            x11.XSetErrorHandler(ctypes.cast(_ignore_errors[0], ctypes.c_void_p))
            exit_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
            _no_exit.append(exit_type(lambda _display, _data: None))
            _libs = (x11, xdo)
        return _libs


_ignore_errors: list = []  # the error handler's C callable, kept alive
_no_exit: list = []  # an I/O error exit handler that returns: Xlib's default exits the process


@dataclass
class Pointer:
    x: int
    y: int
    window: int


@dataclass
class Done:
    """What a command chain did: an error (None: every call succeeded) and, when it asked,
    where the pointer is and which window is under it."""

    error: str | None = None
    pointer: Pointer | None = None


_WITH_VALUE = {"--repeat", "--delay", "--window"}
_COMMANDS = {"mousemove", "click", "mousedown", "mouseup", "sleep", "type", "key", "getmouselocation"}


def _options(todo: list[str]) -> tuple[dict[str, str], list[str]]:
    """Take one command's options and words off ``todo`` (up to the next command, or all
    that follows ``--``)."""
    options: dict[str, str] = {}
    words: list[str] = []
    while todo:
        arg = todo[0]
        if arg == "--":
            todo.pop(0)
            words += todo
            todo.clear()
        elif arg in _WITH_VALUE:
            options[arg] = todo[1]
            del todo[:2]
        elif arg.startswith("--"):
            options[todo.pop(0)] = ""
        elif arg in _COMMANDS and words:  # xdotool's chaining: a command word ends a command that has its words
            break
        else:
            words.append(todo.pop(0))
    return options, words


F = TypeVar("F", bound=Callable)


def _operation(method: F) -> F:
    """Run the method on a connection of its own, or on the one of the operation it is part of."""

    @functools.wraps(method)
    def run(self: Xdo, *args, **kwargs):
        with self._connected():
            return method(self, *args, **kwargs)

    return run  # type: ignore[return-value]


class Xdo:
    """libxdo on one display, a connection per operation (see the module)."""

    def __init__(self, display: str):
        _libraries()  # loaded here, not in the first step
        self.display = display
        self._local = threading.local()  # this thread's open connection and how deep in operations

    @contextlib.contextmanager
    def _connected(self) -> Iterator[None]:
        """A connection for this thread while the outermost operation runs."""
        local = self._local
        if getattr(local, "depth", 0):
            local.depth += 1
            try:
                yield
            finally:
                local.depth -= 1
            return
        x11, xdo = _libraries()
        handle = xdo.xdo_new(self.display.encode())
        if not handle:
            raise EnvFailure(f"libxdo could not connect to the X server {self.display}")
        # the X server gone (killed with the environment): calls fail, the process lives
        x11.XSetIOErrorExitHandler(self._display(handle), ctypes.cast(_no_exit[0], ctypes.c_void_p), None)
        local.xdo, local.depth = handle, 1
        try:
            yield
        finally:
            local.xdo, local.depth = None, 0
            xdo.xdo_free(handle)

    def _xdo(self) -> int:
        return self._local.xdo

    def _display(self, handle: int) -> int:
        return ctypes.c_void_p.from_address(handle).value  # xdo_t's first field: Display *xdpy

    @_operation
    def sync(self) -> None:
        """Return once the X server has handled every request sent so far (and the input
        they faked has been queued to the applications)."""
        x11, _ = _libraries()
        display = self._display(self._xdo())
        x11.XSync(display, 0)
        x11.XSync(display, 0)  # a second round trip: the first one's flush to the clients is done

    # -- input: the calls the xdotool commands make --------------------------------------
    @_operation
    def move(self, x: int, y: int) -> bool:
        return _libraries()[1].xdo_move_mouse(self._xdo(), x, y, 0) == 0

    @_operation
    def click(self, button: int, repeat: int = 1, delay_ms: float = 100) -> bool:
        """``repeat`` clicks ``delay_ms`` apart. libxdo's multiple click also waits the delay
        after the last click (100 ms a click step, for nothing): the last is a click alone."""
        _, xdo = _libraries()
        handle = self._xdo()
        if repeat > 1 and xdo.xdo_click_window_multiple(handle, CURRENTWINDOW, button, repeat - 1,
                                                        int(delay_ms * 1000)) != 0:
            return False
        return xdo.xdo_click_window(handle, CURRENTWINDOW, button) == 0

    @_operation
    def mouse_down(self, button: int) -> bool:
        return _libraries()[1].xdo_mouse_down(self._xdo(), CURRENTWINDOW, button) == 0

    @_operation
    def mouse_up(self, button: int) -> bool:
        return _libraries()[1].xdo_mouse_up(self._xdo(), CURRENTWINDOW, button) == 0

    @_operation
    def type(self, text: str, delay_ms: float = 12) -> bool:
        return _libraries()[1].xdo_enter_text_window(self._xdo(), CURRENTWINDOW, text.encode(),
                                                     int(delay_ms * 1000)) == 0

    @_operation
    def key(self, sequence: str, delay_ms: float = 12) -> bool:
        return _libraries()[1].xdo_send_keysequence_window(self._xdo(), CURRENTWINDOW, sequence.encode(),
                                                           int(delay_ms * 1000)) == 0

    @_operation
    def pointer(self) -> Pointer:
        """Where the pointer is and the top-level window under it (the root if none), as
        ``getmouselocation`` prints them. Not libxdo's call: its client search walks the
        tree without checking XQueryTree, so a menu closing under the pointer made it read
        freed memory (the xdotool process died of the X error instead). With no window
        manager no window has WM_STATE, and that search ends at this same window."""
        x11, _ = _libraries()
        display = self._display(self._xdo())
        root = x11.XDefaultRootWindow(display)
        root_ret, child = _Window(), _Window()
        x, y, wx, wy, mask = ctypes.c_int(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int(), ctypes.c_uint()
        x11.XQueryPointer(display, root, ctypes.byref(root_ret), ctypes.byref(child), ctypes.byref(x),
                          ctypes.byref(y), ctypes.byref(wx), ctypes.byref(wy), ctypes.byref(mask))
        return Pointer(x.value, y.value, int(child.value or root))

    @_operation
    def perform(self, args: list[str]) -> Done:
        """Run one xdotool command chain (``guiforge.envs.desktop.xinput``'s output:
        ``mousemove``, ``click``, ``mousedown``, ``mouseup``, ``sleep``, ``type``, ``key``,
        ``getmouselocation``) through the library, as the ``xdotool`` command would."""
        todo, done = list(args), Done()
        while todo:
            command = todo.pop(0)
            options, words = _options(todo)
            if command == "mousemove":
                ok = self.move(int(words[0]), int(words[1]))
            elif command == "click":
                ok = self.click(int(words[0]), int(options.get("--repeat", 1)), float(options.get("--delay", 100)))
            elif command in ("mousedown", "mouseup"):
                ok = (self.mouse_down if command == "mousedown" else self.mouse_up)(int(words[0]))
            elif command == "sleep":
                self.sync()  # the input so far reaches the application before the pause
                time.sleep(float(words[0]))  # the drag's own timing, part of the gesture
                ok = True
            elif command in ("type", "key"):
                send = self.type if command == "type" else self.key
                ok = all(send(w, float(options.get("--delay", 12))) for w in words)
            elif command == "getmouselocation":
                done.pointer, ok = self.pointer(), True
            else:
                raise ValueError(f"xdotool command {command!r} has no library call here")
            if not ok:
                done.error = f"{command} failed"
                break
        self.sync()
        return done
