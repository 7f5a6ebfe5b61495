"""The kill battery (guiforge/batteries/kills.py): its moments cover every stage, and its
CI variant (a SIGKILL and a SIGTERM of `guiforge run`, the smoke pipeline's first stages) ends with
every table equal to an uninterrupted run's, no duplicate, no temporary file and no process
of a killed run left. With --battery: three kills of a small pipeline with every stage on
Prefect, and the full battery (20 kills of the smoke pipeline, `python bench/kill_battery.py`)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from guiforge.batteries.kills import Timeline, choose_moments
from guiforge.paths import PROJECT_ROOT

STAGES = ["personas", "personas", "worlds", "task_gates", "task_gates", "task_gates", "rollouts", "judge"]
TIMELINE = Timeline(STAGES, [3.0, 4.0, 6.0, 20.0, 30.0, 40.0, 80.0, 90.0], 95.0)


def test_moments_cover_every_stage_in_order_and_follow_the_seed():
    moments = choose_moments(TIMELINE, 20, seed=7)
    assert len(moments) == 20
    assert {m.stage for m in moments} == {*STAGES, "finish"}
    points = [(TIMELINE.cpu[m.commits - 1] if m.commits else 0.0) + m.after_cpu_s for m in moments]
    assert points == sorted(points) and points[-1] <= TIMELINE.total_cpu_s
    for m in moments:  # each lies before the next commit of the uninterrupted run
        assert m.commits == len(STAGES) or m.after_cpu_s <= TIMELINE.cpu[m.commits] - (
            TIMELINE.cpu[m.commits - 1] if m.commits else 0.0)
    # rollouts take most of the CPU time: most of the kills beyond one per stage land there
    assert sum(m.stage == "rollouts" for m in moments) == max(sum(m.stage == s for m in moments) for s in STAGES)
    assert choose_moments(TIMELINE, 20, seed=7) == moments
    assert choose_moments(TIMELINE, 20, seed=8) != moments
    terms = choose_moments(TIMELINE, 20, seed=7, term_share=0.25)
    assert sum(m.signal == "SIGTERM" for m in terms) == 5 and {m.signal for m in moments} == {"SIGKILL"}
    assert [(m.commits, m.after_cpu_s) for m in terms] == [(m.commits, m.after_cpu_s) for m in moments]
    few = choose_moments(TIMELINE, 3, seed=7)
    assert len(few) == 3 and len({m.stage for m in few}) == 3


def _battery(tmp_path, *args: str) -> dict:
    done = subprocess.run([sys.executable, "bench/kill_battery.py", "--workdir", str(tmp_path), *args],
                          cwd=PROJECT_ROOT, capture_output=True, text=True)
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["bench"] == "kill_battery" and set(summary) == {"bench", "figures", "ratios"}
    assert done.returncode == 0, (summary["figures"]["problems"], done.stderr[-3000:])
    return summary


def test_two_kills_then_resume_give_the_uninterrupted_tables(tmp_path):
    summary = _battery(tmp_path, "--size", "ci", "--kills", "2", "--term-share", "0.5", "--executor", "local")
    figures = summary["figures"]
    assert figures["kills_by_signal"] == {"SIGKILL": 1, "SIGTERM": 1}  # the SIGTERMed run exited 143, one line
    assert figures["kills"] == 2 and figures["problems"] == [] and figures["processes_left"] == 0
    assert figures["tables_equal"] == figures["tables_compared"] == 3  # personas, worlds, skills
    assert summary["ratios"]["tables_identical"] == 1.0


@pytest.mark.battery
@pytest.mark.timeout(1800)
def test_three_kills_of_every_stage_on_prefect(tmp_path):
    summary = _battery(tmp_path, "--size", "short", "--kills", "3")
    figures = summary["figures"]
    assert figures["kills"] == 3 and figures["problems"] == [] and figures["processes_left"] == 0
    assert figures["tables_equal"] == figures["tables_compared"] >= 12  # tables and exported datasets
    assert summary["ratios"]["tables_identical"] == 1.0


@pytest.mark.battery
@pytest.mark.timeout(4 * 3600)
def test_twenty_kills_of_the_smoke_pipeline(tmp_path):
    summary = _battery(tmp_path, "--kills", "20")
    assert summary["figures"]["kills"] == 20 and summary["ratios"]["tables_identical"] == 1.0
    assert {"personas", "task_gates", "rollouts", "judge", "export"} <= set(summary["figures"]["kills_by_stage"])
