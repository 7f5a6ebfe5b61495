"""Reset and step latency per environment domain, side by side with BrowserGym on the same page.

    python bench/envs.py [--resets 30] [--steps 15] [--warmup 10] [--bg-resets 5]
                         [--domains web,mobile,desktop,tools,replay]
                         [--skip-browsergym] [--headless-shell]

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

Every figure is a median (and the fastest) of wall seconds plus the CPU seconds the whole
process tree spent per operation; CPU is the stable figure when the machine is shared. The
web reset is measured before and after BrowserGym and the slower median is the one compared.
The last line is one JSON object ``{"bench": "envs", "figures": {...}, "ratios": {...}}``;
every ratio compares two things measured in this run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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

from _timing import loadavg, measure

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
def bench_web(args: argparse.Namespace, prefix: str = "web", full: bool = True) -> tuple[Figures, tuple[float, float]]:
    from guiforge.envs.web import WebEnv

    task = mail_task("web")
    env = WebEnv(EnvSpec(domain="web"))
    t0 = time.perf_counter()
    env.start()
    f: Figures = {f"{prefix}_start_s": round(time.perf_counter() - t0, 3),
                  f"{prefix}_begin_frames": int(env.frames.name == "begin_frame")}
    try:
        obs = env.reset(task)
        for _ in range(args.warmup):  # untimed: V8 compiles the apps' hot paths on the first resets
            env.reset(task)
        f |= measure(lambda: env.reset(task), args.resets, f"{prefix}_reset")
        box = find(obs, id="star-e-dan")["box"]
        click = ((box[0] + box[2] / 2) / env.scale, (box[1] + box[3] / 2) / env.scale)
        if not full:
            return f, click
        star = pointer(obs, "click", id="star-e-dan")
        f |= measure(lambda: env.step(star), args.steps, f"{prefix}_step_click")

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
    return f, click


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


def bench_browsergym(args: argparse.Namespace, python: Path, click: tuple[float, float]) -> Figures:
    setup = mail_task("web").setup
    seed = json.dumps({"apps": setup["apps"], "system": setup["system"], "start": "/mail/inbox"})
    server = AppServer()
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        fh.write(seed)
    try:
        cmd = [str(python), str(SIDE), "--url", f"{server.url}/mail/inbox", "--seed-file", fh.name,
               "--click", f"{click[0]:.1f},{click[1]:.1f}", "--resets", str(args.bg_resets), "--steps", str(args.steps)]
        env = {**os.environ, "PLAYWRIGHT_BROWSERS_PATH": str(BROWSERS)}
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    finally:
        server.close()
        os.unlink(fh.name)
    if done.returncode != 0:
        raise SystemExit(f"bench/envs.py: BrowserGym's run failed (exit {done.returncode}): "
                         f"{(done.stderr or done.stdout).strip()[-800:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    log(f"browsergym: screenshot {out.pop('screenshot_shape')}, click changed the app state: {bool(out['click_changed_state'])}")
    return {f"browsergym_{k}": v for k, v in out.items()}


# -- main ---------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resets", type=int, default=30)
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=10, help="untimed web resets before the timed ones")
    ap.add_argument("--bg-resets", type=int, default=5, help="BrowserGym resets (each relaunches two browsers), >= 1")
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
    click = (0.0, 0.0)
    if "web" in domains or python:
        web, click = on_own_thread(lambda: bench_web(args))
        figures |= web
        log(f"web: reset {web['web_reset_median_s']:.3f}s (cpu {web['web_reset_cpu_s']:.3f}s), "
            f"click {web['web_step_click_median_s']:.3f}s")
    for name, fn in (("mobile", bench_mobile), ("desktop", bench_desktop), ("tools", bench_tools),
                     ("replay", bench_replay)):
        if name not in domains:
            continue
        try:
            figures |= on_own_thread(lambda fn=fn: fn(args))
            log(f"{name}: measured")
        except (ImportError, RuntimeError, OSError) as exc:
            log(f"{name}: skipped ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})")
    ratios: Figures = {}
    if python:
        figures |= bench_browsergym(args, python, click)
        again, _ = on_own_thread(lambda: bench_web(args, prefix="web_again", full=False))
        figures |= {k: v for k, v in again.items() if k.startswith("web_again_reset_")}
        web_reset = max(figures["web_reset_median_s"], figures["web_again_reset_median_s"])
        web_reset_cpu = max(figures["web_reset_cpu_s"], figures["web_again_reset_cpu_s"])
        ratios = {
            "web_reset_speedup_vs_browsergym": round(figures["browsergym_reset_median_s"] / web_reset, 1),
            "web_reset_cpu_saving_vs_browsergym": round(figures["browsergym_reset_cpu_s"] / web_reset_cpu, 1),
            "web_step_speedup_vs_browsergym": round(figures["browsergym_step_click_median_s"] / figures["web_step_click_median_s"], 1),
            "web_step_speedup_vs_browsergym_default_delay": round(
                figures["browsergym_step_click_default_delay_median_s"] / figures["web_step_click_median_s"], 1),
        }
        log(f"browsergym: reset {figures['browsergym_reset_median_s']:.3f}s, click {figures['browsergym_step_click_median_s']:.3f}s; "
            f"web reset {ratios['web_reset_speedup_vs_browsergym']}x faster "
            f"(goal: <= 0.1 s and >= 20x; measured {web_reset:.3f}s)")
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
