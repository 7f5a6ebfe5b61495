"""Reset and step latency per environment domain, side by side with BrowserGym on the same page.

    python bench/envs.py [--resets 60] [--steps 20] [--warmup 10] [--bg-resets 10]
                         [--domains web,mobile,desktop,tools,replay]
                         [--skip-browsergym] [--headless-shell] [--per-round]

web: WebEnv on the mail app seeded from the sample world; the step is a click that toggles a
star (a re-render). BrowserGym runs the *same* page: the app is served on 127.0.0.1, its
task loads the same seed JSON and its step is a ``mouse_click`` on the same star's centre.
BrowserGym pins an older Playwright, so it gets its own venv (bench/.venvs/browsergym,
created from PyPI on the first run) and a stand-in browser folder
(``PLAYWRIGHT_BROWSERS_PATH``) whose ``chromium-<rev>/chrome-linux/chrome`` is a wrapper
that execs Debian's /usr/bin/chromium with our isolation flags: both sides drive the same
browser binary with the same flags. Everything else runs offline. On the headless shell our
page draws its frames on demand (guiforge.envs.web.frames); the same reset on Chromium's own
60 Hz clock (GUIFORGE_BEGIN_FRAMES=0) is timed as ``web_vsync_reset_*``.

mobile: MobileEnv (Pixel 7), tap on the same star. replay: the mail page recorded from
127.0.0.1, then replayed offline by ReplayEnv (reset, a click). desktop / tools: measured
when their adapters import and their tools are installed, else skipped with the reason.

BrowserGym runs as a command loop in its own process (bench/_browsergym_side.py), started
once and kept; its resets and clicks are interleaved with ours in rounds (``--bg-resets``
rounds of resets/rounds of ours, then one of BrowserGym's), so a busy spell of the shared
machine falls on both sides alike. Besides the ratio of the medians, the ratio in the round
least favourable to us is reported (``web_reset_speedup_slowest_round``); ``--per-round``
prints every round's times.

Every figure is a median (and the fastest) of wall seconds plus the CPU seconds the whole
process tree spent per operation; CPU is the stable figure when the machine is shared.
The last line is one JSON object ``{"bench": "envs", "figures": {...}, "ratios": {...}}``;
every ratio compares two things measured in this run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from _timing import loadavg, measure, samples, summary

from guiforge.envs.actions import Action
from guiforge.envs.base import EnvSpec, TaskSpec
from guiforge.envs.web.grounding import find, pointer
from guiforge.envs.web.sample_world import sample_world
from guiforge.preparers.web_apps import web_setup

BENCH = Path(__file__).resolve().parent
VENV = BENCH / ".venvs" / "browsergym"
BROWSERS = BENCH / ".venvs" / "browsergym-browsers"
BROWSERGYM_SPEC = "browsergym-core==0.14.3"  # the version this bench was written against
SIDE = BENCH / "_browsergym_side.py"
HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell"
Figures = dict[str, float]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def on_own_thread(fn: Callable[[], Any]) -> Any:
    """Playwright's sync API binds to a thread; each domain gets a fresh one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn).result()


def mail_task(domain: str) -> TaskSpec:
    return TaskSpec(task_id=f"bench-{domain}", domain=domain, apps=["mail"], instruction="Star Daniel's email",
                    setup=web_setup(sample_world(), start="mail"))


# -- our domains --------------------------------------------------------------------------
def interleaved(ours: Callable[[], object], op: str, n: int, rounds: int, side: BrowserGymSide,
                prefix: str, verbose: bool = False) -> tuple[Figures, list[float]]:
    """``rounds`` rounds of (n // rounds of our operations, one of BrowserGym's ``op``), so a
    busy spell of the machine falls on both sides alike. Figures for both sides, and per
    round BrowserGym's time over the median of ours in that round."""
    per = max(1, n // rounds)
    walls, cpus, their_walls, their_cpus, per_round = [], [], [], [], []
    for _ in range(rounds):
        w, c = samples(ours, per)
        tw, tc = side.run(op, 1)
        walls += w
        cpus += c
        their_walls += tw
        their_cpus += tc
        per_round.append(tw[0] / statistics.median(w))
        if verbose:
            log(f"{prefix}: ours {[round(x * 1000, 1) for x in w]} ms, browsergym {round(tw[0] * 1000)} ms")
    return summary(walls, cpus, prefix) | summary(their_walls, their_cpus, f"browsergym_{op}"), per_round


def bench_web(args: argparse.Namespace, prefix: str = "web", full: bool = True,
              open_side: Callable[[tuple[float, float]], BrowserGymSide] | None = None) -> tuple[Figures, dict[str, list[float]]]:
    """Our web env on the mail page; with ``open_side``, BrowserGym on the same page (its
    command loop started once our first observation says where the star is), its resets and
    clicks interleaved with ours. Returns the figures and, per interleaved operation, the
    per-round speedups."""
    from guiforge.envs.web import WebEnv

    task = mail_task("web")
    env = WebEnv(EnvSpec(domain="web"))
    t0 = time.perf_counter()
    env.start()
    f: Figures = {f"{prefix}_start_s": round(time.perf_counter() - t0, 3),
                  f"{prefix}_begin_frames": int(env.frames.name == "begin_frame")}
    rounds: dict[str, list[float]] = {}
    try:
        obs = env.reset(task)
        for _ in range(args.warmup):  # untimed: V8 compiles the apps' hot paths on the first resets
            env.reset(task)
        box = find(obs, id="star-e-dan")["box"]
        click = ((box[0] + box[2] / 2) / env.scale, (box[1] + box[3] / 2) / env.scale)
        side = open_side(click) if open_side else None
        if side is None:
            f |= measure(lambda: env.reset(task), args.resets, f"{prefix}_reset")
        else:
            figures, rounds["reset"] = interleaved(lambda: env.reset(task), "reset", args.resets, args.bg_resets,
                                                   side, f"{prefix}_reset", args.per_round)
            f |= figures
        if not full:
            return f, rounds
        star = pointer(obs, "click", id="star-e-dan")
        if side is None:
            f |= measure(lambda: env.step(star), args.steps, f"{prefix}_step_click")
        else:
            figures, rounds["click"] = interleaved(lambda: env.step(star), "click", args.steps,
                                                   min(args.steps, args.bg_resets), side, f"{prefix}_step_click",
                                                   args.per_round)
            f |= figures | summary(*side.run("click_default_delay", max(2, args.steps // 3)),
                                   "browsergym_click_default_delay")
            f |= {f"browsergym_{k}": v for k, v in side.info.items() if k != "screenshot_shape"}

        def episode_then_reset() -> None:  # the usual case: the reset undoes an episode
            env.step(star)
            env.step(Action(type="goto", text="calendar"))
            env.step(Action(type="scroll", x=500, y=500, direction="down"))

        f |= measure(lambda: env.reset(task), args.resets // 3 or 1, f"{prefix}_reset_after_episode",
                     before=episode_then_reset)
        env.image_format = "jpeg"
        f |= measure(lambda: env.reset(task), args.resets, f"{prefix}_reset_jpeg")
    finally:
        env.close()
    return f, rounds


def bench_mobile(args: argparse.Namespace) -> Figures:
    from guiforge.envs.web import MobileEnv

    task = mail_task("mobile")
    env = MobileEnv(EnvSpec(domain="mobile"))
    t0 = time.perf_counter()
    env.start()
    f: Figures = {"mobile_start_s": round(time.perf_counter() - t0, 3)}
    try:
        obs = env.reset(task)
        f |= measure(lambda: env.reset(task), args.resets, "mobile_reset")
        star = pointer(obs, "tap", id="star-e-dan")
        f |= measure(lambda: env.step(star), args.steps, "mobile_step_tap")
    finally:
        env.close()
    return f


def bench_desktop(args: argparse.Namespace) -> Figures:
    from guiforge.envs.desktop import DesktopEnv

    missing = [t for t in ("Xvfb", "xdotool", "bwrap", "soffice") if shutil.which(t) is None]
    if missing:
        raise RuntimeError(f"missing {', '.join(missing)}")
    task = TaskSpec(task_id="bench-desktop", domain="desktop", instruction="look",
                    setup={"files": {"data.csv": {"text": "region,q1\nNorth,10\nSouth,30\n"}}, "open": "data.csv"})
    env = DesktopEnv(EnvSpec(domain="desktop", variant="hybrid"))
    t0 = time.perf_counter()
    env.start()
    f: Figures = {"desktop_start_s": round(time.perf_counter() - t0, 3)}
    try:
        env.reset(task)
        n = max(2, args.resets // 10)  # each reset relaunches LibreOffice on the new files
        f |= measure(lambda: env.reset(task), n, "desktop_reset")
        f |= measure(lambda: env.step(Action(type="click", x=300, y=300)), args.steps, "desktop_step_click")
        f |= measure(lambda: env.step(Action(type="bash", text="wc -l data.csv")), args.steps, "desktop_step_bash")
    finally:
        env.kill() if hasattr(env, "kill") else env.close()
    return f


def bench_tools(args: argparse.Namespace) -> Figures:
    from guiforge.envs.tools import ToolsEnv

    task = TaskSpec(task_id="bench-tools", domain="tools", instruction="Total the sales",
                    setup={"files": {"sales.csv": "region,amount\nNorth,10\nSouth,30\n"}})
    env = ToolsEnv(EnvSpec(domain="tools"))
    env.start()
    try:
        env.reset(task)
        f = measure(lambda: env.reset(task), args.resets, "tools_reset")
        search = Action(type="call_tool", text=json.dumps({"name": "search_tool", "arguments": {"query": "sum a column"}}))
        f |= measure(lambda: env.step(search), args.steps, "tools_step_search")
    finally:
        env.close()
    return f


def bench_replay(args: argparse.Namespace) -> Figures:
    """Record the mail app as served on 127.0.0.1 (offline), then replay it."""
    from guiforge.envs.replay import ReplayEnv, record

    server = AppServer()
    try:
        with tempfile.TemporaryDirectory(prefix="guiforge-bench-") as tmp:
            path = Path(tmp) / "mail.json"
            t0 = time.perf_counter()
            on_own_thread(lambda: record(f"{server.url}/mail/inbox", path))
            f: Figures = {"replay_record_s": round(time.perf_counter() - t0, 3)}
            server.close()  # the replay must not need it
            task = TaskSpec(task_id="bench-replay", domain="web", instruction="look", setup={"replay": str(path)})
            env = ReplayEnv(EnvSpec(domain="web"))
            env.start()
            try:
                obs = env.reset(task)
                f |= measure(lambda: env.reset(task), args.resets // 3 or 1, "replay_reset")
                compose = pointer(obs, "click", id="compose")
                f |= measure(lambda: env.step(compose), args.steps, "replay_step_click")
                if env.router.misses:
                    raise RuntimeError(f"replay missed {env.router.misses[:3]}")
            finally:
                env.close()
    finally:
        server.close()
    return f


# -- BrowserGym ---------------------------------------------------------------------------
def ensure_browsergym(spec: str, venv: Path) -> Path:
    """BrowserGym's venv (created on first use, or when ``spec`` pins another version) and
    the stand-in browser folder. Exits with the reason when it cannot be installed."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import importlib.metadata as m, os, browsergym.core, playwright; "
             "print(m.version('browsergym-core'), os.path.dirname(playwright.__file__))"]
    found = subprocess.run(probe, capture_output=True, text=True) if python.exists() else None
    pinned = spec.split("==", 1)[1] if "==" in spec else None
    if found is None or found.returncode != 0 or (pinned and found.stdout.split()[0] != pinned):
        log(f"creating {venv} and installing {spec} from PyPI (first run only)")
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        pip = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", spec],
                             capture_output=True, text=True, timeout=900)
        if pip.returncode != 0:
            lines = [ln for ln in (pip.stderr or pip.stdout).strip().splitlines() if not ln.startswith("WARNING")]
            raise SystemExit(f"bench/envs.py: cannot install {spec} into {venv} (pip exit {pip.returncode}: "
                             f"{' | '.join(lines[-2:])}); check that PyPI is reachable, or run with --skip-browsergym")
        found = subprocess.run(probe, capture_output=True, text=True)
        if found.returncode != 0:
            raise SystemExit(f"bench/envs.py: {spec} installed into {venv} but does not import "
                             f"({found.stderr.strip()[-300:]}); delete {venv} and rerun")
    version, playwright_dir = found.stdout.split()
    log(f"browsergym-core {version} from {venv}")
    standin_browsers(Path(playwright_dir))
    return python


def standin_browsers(playwright_dir: Path) -> None:
    """Create the executables BrowserGym's Playwright looks for under
    PLAYWRIGHT_BROWSERS_PATH, as wrappers around Debian's Chromium with our flags:
    ``chromium-<rev>/chrome-linux/chrome`` (Playwright <= 1.48), and the headless-shell
    layouts newer versions use for headless launches."""
    from guiforge.envs.web.browser import CHROMIUM, CHROMIUM_ARGS

    manifest = json.loads((playwright_dir / "driver" / "package" / "browsers.json").read_text())
    revs = {b["name"]: b["revision"] for b in manifest["browsers"]}
    flags = " ".join(f"'{a}'" for a in CHROMIUM_ARGS)
    wrapper = f'#!/bin/sh\n# BrowserGym\'s Playwright launches this: Debian\'s Chromium, guiforge\'s flags\nexec {CHROMIUM} {flags} "$@"\n'
    targets = [f"chromium-{revs['chromium']}/chrome-linux/chrome"]
    if "chromium-headless-shell" in revs:
        rev = revs["chromium-headless-shell"]
        targets += [f"chromium_headless_shell-{rev}/chrome-linux/headless_shell",
                    f"chromium_headless_shell-{rev}/chrome-headless-shell-linux64/chrome-headless-shell"]
    for rel in targets:
        exe = BROWSERS / rel
        exe.parent.mkdir(parents=True, exist_ok=True)
        exe.write_text(wrapper)
        exe.chmod(0o755)
        (exe.parents[1] / "INSTALLATION_COMPLETE").touch()


class AppServer:
    """The apps' static files on 127.0.0.1 (BrowserGym cannot use our in-browser routes)."""

    def __init__(self) -> None:
        from guiforge.envs.apps import assets, shell

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: object) -> None:
                pass

            def do_GET(self) -> None:
                path = urlsplit(self.path).path
                body, kind = assets().get(path) or shell()
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class BrowserGymSide:
    """BrowserGym's command loop (bench/_browsergym_side.py) in its own venv, on the same
    page served on 127.0.0.1: ``run(op, n)`` times n of its operations while ours wait."""

    def __init__(self, python: Path, click: tuple[float, float]):
        setup = mail_task("web").setup
        seed = json.dumps({"apps": setup["apps"], "system": setup["system"], "start": "/mail/inbox"})
        self.server = AppServer()
        self.closed = False
        self.tmp = Path(tempfile.mkdtemp(prefix="guiforge-bench-bg-"))
        (self.tmp / "seed.json").write_text(seed)
        cmd = [str(python), str(SIDE), "--url", f"{self.server.url}/mail/inbox", "--seed-file",
               str(self.tmp / "seed.json"), "--click", f"{click[0]:.1f},{click[1]:.1f}"]
        env = {**os.environ, "PLAYWRIGHT_BROWSERS_PATH": str(BROWSERS)}
        with open(self.tmp / "stderr.log", "w") as stderr:  # read only when it fails
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                         text=True, env=env)
        self.info = self._answer("start")
        log(f"browsergym: screenshot {self.info['screenshot_shape']}, "
            f"click changed the app state: {bool(self.info['click_changed_state'])}")

    def _answer(self, what: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        reply = json.loads(line) if line.strip() else {}
        if not reply or "error" in reply:
            detail = reply.get("error") or (self.tmp / "stderr.log").read_text().strip()[-800:]
            self.close()
            raise SystemExit(f"bench/envs.py: BrowserGym's side failed at {what} (exit {self.proc.returncode}): {detail}")
        return reply

    def run(self, op: str, n: int) -> tuple[list[float], list[float]]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{op} {n}\n")
        self.proc.stdin.flush()
        reply = self._answer(op)
        return reply["wall"], reply["cpu"]

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.communicate("quit\n", timeout=60)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.server.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def browsergym_ratios(f: Figures, rounds: dict[str, list[float]]) -> Figures:
    """Ours vs BrowserGym's, both measured in the same interleaved rounds: the ratio of the
    medians, and the ratio in the round least favourable to us."""
    return {
        "web_reset_speedup_vs_browsergym": round(f["browsergym_reset_median_s"] / f["web_reset_median_s"], 1),
        "web_reset_speedup_slowest_round": round(min(rounds["reset"]), 1),
        "web_reset_speedup_median_round": round(statistics.median(rounds["reset"]), 1),
        "web_reset_cpu_saving_vs_browsergym": round(f["browsergym_reset_cpu_s"] / f["web_reset_cpu_s"], 1),
        "web_step_speedup_vs_browsergym": round(f["browsergym_click_median_s"] / f["web_step_click_median_s"], 1),
        "web_step_speedup_slowest_round": round(min(rounds["click"]), 1),
        "web_step_speedup_vs_browsergym_default_delay": round(
            f["browsergym_click_default_delay_median_s"] / f["web_step_click_median_s"], 1),
    }


# -- main ---------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resets", type=int, default=60)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=10, help="untimed web resets before the timed ones")
    ap.add_argument("--bg-resets", type=int, default=10,
                    help="BrowserGym resets (each relaunches two browsers: the page and its chat), >= 1; the rounds ours are interleaved with")
    ap.add_argument("--per-round", action="store_true", help="print each interleaved round's times (stderr)")
    ap.add_argument("--domains", default="web,mobile,desktop,tools,replay")
    ap.add_argument("--skip-browsergym", action="store_true")
    ap.add_argument("--headless-shell", action="store_true",
                    help=f"also time web resets on {HEADLESS_SHELL} (apt-get install chromium-headless-shell)")
    ap.add_argument("--browsergym-spec", default=BROWSERGYM_SPEC, help="pip requirement for BrowserGym")
    ap.add_argument("--browsergym-venv", type=Path, default=VENV, help="where BrowserGym's venv lives")
    args = ap.parse_args(argv)
    if min(args.resets, args.steps, args.bg_resets) < 1:
        ap.error("--resets, --steps and --bg-resets must be at least 1 (use --skip-browsergym to leave it out)")
    domains = {d.strip() for d in args.domains.split(",") if d.strip()}
    python = None if args.skip_browsergym else ensure_browsergym(args.browsergym_spec, args.browsergym_venv)  # fail early

    figures: Figures = {"loadavg_1m_start": loadavg(), "cpus": os.cpu_count() or 0}
    ratios: Figures = {}
    if "web" in domains or python:
        sides: list[BrowserGymSide] = []

        def open_side(click: tuple[float, float]) -> BrowserGymSide:
            assert python is not None
            sides.append(BrowserGymSide(python, click))
            return sides[-1]

        try:
            web, rounds = on_own_thread(lambda: bench_web(args, open_side=open_side if python else None))
        finally:
            for side in sides:
                side.close()
        figures |= web
        log(f"web: reset {web['web_reset_median_s']:.3f}s (cpu {web['web_reset_cpu_s']:.3f}s), "
            f"click {web['web_step_click_median_s']:.3f}s")
        if python:
            ratios = browsergym_ratios(figures, rounds)
            log(f"browsergym: reset {figures['browsergym_reset_median_s']:.3f}s, click "
                f"{figures['browsergym_click_median_s']:.3f}s; web reset {ratios['web_reset_speedup_vs_browsergym']}x "
                f"faster (slowest round {ratios['web_reset_speedup_slowest_round']}x; goal: <= 0.1 s and >= 20x; "
                f"measured {figures['web_reset_median_s']:.3f}s)")
    for name, fn in (("mobile", bench_mobile), ("desktop", bench_desktop), ("tools", bench_tools),
                     ("replay", bench_replay)):
        if name not in domains:
            continue
        try:
            figures |= on_own_thread(lambda fn=fn: fn(args))
            log(f"{name}: measured")
        except (ImportError, RuntimeError, OSError) as exc:
            log(f"{name}: skipped ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})")
    if "web" in domains and figures.get("web_begin_frames"):  # the same reset on Chromium's own frame clock
        os.environ["GUIFORGE_BEGIN_FRAMES"] = "0"
        try:
            clocked, _ = on_own_thread(lambda: bench_web(args, prefix="web_vsync", full=False))
        finally:
            del os.environ["GUIFORGE_BEGIN_FRAMES"]
        figures |= {k: v for k, v in clocked.items() if k.startswith("web_vsync_reset_")}
        ratios["web_reset_vsync_vs_begin_frames"] = round(
            figures["web_vsync_reset_median_s"] / figures["web_reset_median_s"], 2)
        ratios["web_reset_cpu_vsync_vs_begin_frames"] = round(
            figures["web_vsync_reset_cpu_s"] / figures["web_reset_cpu_s"], 2)
    if args.headless_shell:  # Debian's chromium-headless-shell: same engine, a lighter browser process
        import guiforge.envs.web.browser as browser

        if not Path(HEADLESS_SHELL).exists():
            raise SystemExit(f"bench/envs.py: {HEADLESS_SHELL} not found; apt-get install chromium-headless-shell")
        browser.CHROMIUM, default = HEADLESS_SHELL, browser.CHROMIUM
        try:
            shell, _ = on_own_thread(lambda: bench_web(args, prefix="web_headless_shell", full=False))
        finally:
            browser.CHROMIUM = default
        figures |= {k: v for k, v in shell.items() if "_reset_" in k}
        if "web_reset_cpu_s" in figures:
            ratios["web_headless_shell_vs_chromium_reset_cpu"] = round(
                figures["web_headless_shell_reset_cpu_s"] / figures["web_reset_cpu_s"], 2)
    if "web_reset_jpeg_median_s" in figures:
        ratios["web_reset_jpeg_vs_png"] = round(figures["web_reset_jpeg_median_s"] / figures["web_reset_median_s"], 2)
    if "mobile_reset_median_s" in figures and "web_reset_median_s" in figures:
        ratios["mobile_vs_web_reset"] = round(figures["mobile_reset_median_s"] / figures["web_reset_median_s"], 2)
    figures["loadavg_1m_end"] = loadavg()
    print(json.dumps({"bench": "envs", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
