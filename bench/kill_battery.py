"""The kill battery: ``guiforge run`` of the smoke pipeline SIGKILLed (its process group) or
SIGTERMed at N seeded moments spread over every stage, rerun after each kill, the last run to
the end;
then every table and exported dataset must equal an uninterrupted run's (content hashes over
sorted rows, image hashes included, wall-clock columns left out), with no duplicate row, no
temporary file and no browser, LibreOffice or Prefect process left.

    python bench/kill_battery.py [--kills 20] [--seed 7] [--size full|short|ci]
                                 [--term-share 0.25] [--executor prefect|local]
                                 [--workdir DIR]

``--size``: the whole smoke pipeline, a small one with every stage, or the CI variant's
(tests/test_kill_battery.py); ``--term-share``: how many of the kills are a SIGTERM to the run
(it must exit 143 with one line) rather than a SIGKILL of its process group. The last line is one
JSON object ``{"bench": "kill_battery", "figures": {...}, "ratios": {"tables_identical": 1.0,
...}}``; the exit code is 1 when any check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from guiforge.batteries.kills import SIZES, run_battery


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20, help="how many SIGKILLs (default 20)")
    parser.add_argument("--seed", type=int, default=7, help="the seed that places the kills")
    parser.add_argument("--size", default="full", choices=SIZES, help="the pipeline (default: the whole smoke)")
    parser.add_argument("--term-share", type=float, default=0.25,
                        help="the share of kills that are a SIGTERM to the run instead (default 0.25)")
    parser.add_argument("--executor", default="prefect", choices=["prefect", "local"])
    parser.add_argument("--workdir", type=Path, default=None, help="where the lakes go (default: a temporary folder)")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="guiforge-kill-battery-"))
    print(f"kill battery in {workdir}", file=sys.stderr)
    result = run_battery(workdir, args.kills, args.seed, args.size, args.executor,
                         term_share=args.term_share)
    summary = result.summary(args.kills)
    summary["figures"].update(workdir=str(workdir), executor=args.executor, loadavg_1m=round(os.getloadavg()[0], 2))
    for problem in result.problems:
        print(f"problem: {problem}", file=sys.stderr)
    print(json.dumps(summary))
    sys.exit(0 if not result.problems and len(result.kills) == args.kills else 1)


if __name__ == "__main__":
    main()
