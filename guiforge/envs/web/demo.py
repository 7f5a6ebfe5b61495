"""Look at an app: ``python -m guiforge.envs.web.demo --app mail --out /tmp/mail.png``.

Seeds every app from the sample world (or ``--world world.json``), opens ``--path`` (default:
the app's home) in the web or ``--mobile`` viewport, and writes a screenshot.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from guiforge.envs.apps import APP_NAMES, app_info
from guiforge.envs.base import EnvSpec, TaskSpec
from guiforge.envs.web.mobile_env import MobileEnv
from guiforge.envs.web.sample_world import sample_world
from guiforge.envs.web.web_env import WebEnv
from guiforge.preparers.web_apps import web_setup
from guiforge.worlds.model import World


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--app", choices=APP_NAMES, default="mail")
    ap.add_argument("--path", help="a route such as /mail/inbox/e-invoice (default: the app's home)")
    ap.add_argument("--out", type=Path, default=Path("/tmp/guiforge-app.png"))
    ap.add_argument("--mobile", action="store_true", help="Pixel 7 emulation instead of a 1280x720 desktop")
    ap.add_argument("--world", type=Path, help="a World JSON file (default: the built-in sample world)")
    ap.add_argument("--elements", action="store_true", help="print the interactive elements the adapter sees")
    args = ap.parse_args(argv)

    world = World.model_validate_json(args.world.read_text()) if args.world else sample_world()
    start = args.path or app_info(args.app).home
    task = TaskSpec(task_id="demo", domain="mobile" if args.mobile else "web", apps=[args.app], instruction="look",
                    setup=web_setup(world, start=start))
    env = (MobileEnv if args.mobile else WebEnv)(EnvSpec(domain=task.domain))
    t0 = time.perf_counter()
    env.start()
    try:
        obs = env.reset(task)
        args.out.write_bytes(obs.screenshot or b"")
        print(f"{args.out}: {obs.width}x{obs.height} {obs.format}, path {obs.debug['path']}, "
              f"{len(obs.debug['elements'])} interactive elements, {time.perf_counter() - t0:.2f}s")
        if args.elements:
            for el in obs.debug["elements"]:
                print(json.dumps({k: el[k] for k in ("id", "label", "grid")}, ensure_ascii=False))
    finally:
        env.close()


if __name__ == "__main__":
    main()
