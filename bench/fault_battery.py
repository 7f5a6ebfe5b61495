"""The fault-injection battery: the smoke pipeline (data/pipelines/smoke.yaml's stages and
sizes) with every fault of ``faults:`` at 10%, its teacher and judge behind local endpoints
that speak the OpenAI and Anthropic wire formats (through the official SDKs), run with
``guiforge run``; then every injection is matched with the row it must leave.

    python bench/fault_battery.py [--short] [--rate 0.1] [--seed 3] [--executor local|prefect]
                                  [--workdir DIR]

Done when the run exits 0, every injected fault is a row of its kind (a trajectory, a
package-gate exclusion once its retry met a fault too, a judgment), no row of a failure kind
lacks its injection, and no fault is ever a reward (no outcome, never accepted, never among
the RL counts, relabels, diagnoses or exports). ``--short`` is the CI variant
(tests/test_fault_battery.py). The last line is one JSON object
``{"bench": "fault_battery", "figures": {...}, "ratios": {"fault_rows_per_expected": 1.0}}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from guiforge.batteries.faults import every_fault, run_battery


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="the CI variant: fewer units, no desktop")
    parser.add_argument("--rate", type=float, default=None, help="every fault's rate (default 0.1; --short: its own)")
    parser.add_argument("--seed", type=int, default=None, help="the faults' seed (default 3; --short: 197)")
    parser.add_argument("--executor", default="local", choices=["local", "prefect"])
    parser.add_argument("--workdir", type=Path, default=None, help="where the lake goes (default: a temporary folder)")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="guiforge-fault-battery-"))
    rates = every_fault(args.rate) if args.rate is not None else None
    print(f"fault battery in {workdir}", file=sys.stderr)
    result = run_battery(workdir, rates, args.seed, args.short, args.executor)
    summary = result.summary()
    summary["figures"]["workdir"] = str(workdir)
    summary["figures"]["loadavg_1m"] = round(os.getloadavg()[0], 2)
    for problem in result.problems:
        print(f"problem: {problem}", file=sys.stderr)
    print(json.dumps(summary))
    sys.exit(0 if result.exit_code == 0 and not result.problems else 1)


if __name__ == "__main__":
    main()
