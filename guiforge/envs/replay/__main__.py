"""Record, inspect and try replays.

    python -m guiforge.envs.replay record URL --out shop.json.gz [--visit URL ...]
    python -m guiforge.envs.replay show shop.json.gz
    python -m guiforge.envs.replay shot shop.json.gz --out shop.png

``record`` needs the site reachable (the only step that does); ``show`` and ``shot`` are
offline. Scripted sessions (forms, clicks) use :func:`guiforge.envs.replay.record` with a
``drive(page)`` function.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from guiforge.envs.base import EnvSpec, TaskSpec
from guiforge.envs.replay.env import ReplayEnv
from guiforge.envs.replay.recorder import record
from guiforge.envs.replay.recording import Recording


def _record(args: argparse.Namespace) -> None:
    def drive(page) -> None:
        for url in args.visit:
            page.goto(url, wait_until="load")
            page.wait_for_timeout(args.settle_ms)

    w, h = (int(v) for v in args.viewport.lower().split("x"))
    rec = record(args.url, args.out, drive if args.visit else None, viewport=(w, h), settle_ms=args.settle_ms)
    print(f"{args.out}: {len(rec.exchanges)} exchanges, replaced {rec.replaced}")


def _show(args: argparse.Namespace) -> None:
    rec = Recording.load(args.file)
    print(f"start {rec.start_url}  viewport {rec.viewport[0]}x{rec.viewport[1]}  replaced {rec.replaced}")
    for ex in rec.exchanges:
        print(f"{ex.status:>3} {len(ex.body):>8} B  {ex.key}")


def _shot(args: argparse.Namespace) -> None:
    env = ReplayEnv(EnvSpec(domain="web"))
    env.start()
    try:
        obs = env.reset(TaskSpec(task_id="shot", domain="web", instruction="look", setup={"replay": str(args.file)}))
        args.out.write_bytes(obs.screenshot or b"")
        misses = env.router.misses
        print(f"{args.out}: {obs.width}x{obs.height}, {len(obs.debug['elements'])} elements, "
              f"{env.router.served} answered, {len(misses)} not in the recording {misses[:5]}")
    finally:
        env.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m guiforge.envs.replay", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record a browsing session (the site must be reachable)")
    rec.add_argument("url")
    rec.add_argument("--out", type=Path, required=True, help="recording file (.json or .json.gz)")
    rec.add_argument("--visit", action="append", default=[], help="another URL to open during the session")
    rec.add_argument("--viewport", default="1280x720")
    rec.add_argument("--settle-ms", type=int, default=500, help="wait after each page for late requests")
    rec.set_defaults(run=_record)
    show = sub.add_parser("show", help="list a recording's exchanges")
    show.add_argument("file", type=Path)
    show.set_defaults(run=_show)
    shot = sub.add_parser("shot", help="replay a recording offline and save the first screenshot")
    shot.add_argument("file", type=Path)
    shot.add_argument("--out", type=Path, default=Path("/tmp/guiforge-replay.png"))
    shot.set_defaults(run=_shot)
    args = ap.parse_args(argv)
    args.run(args)


if __name__ == "__main__":
    main()
