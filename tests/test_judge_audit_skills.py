"""The judge audit per skill: the catalog's judge_audit has skill rows and judge_blind_spots
names the skills whose verifier-passed trajectories the judge mostly rejects; `guiforge stats`
prints them and the report's judge section has a per-skill table, lowest recall first."""

from __future__ import annotations

import subprocess
import sys

from guiforge.catalog import open_catalog
from guiforge.lake import Lake, ShardCommit, commit_shard
from guiforge.report.build import build_sections

RUN = "r1"
# (skill, domain, judge's verdict, verifier's verdict) per trajectory
OUTCOMES = [("tools.column_std_with_code", "tools", False, True)] * 3 + [
    ("tools.column_std_with_code", "tools", False, False),
    ("mail.send_draft", "web", True, True), ("mail.send_draft", "web", True, True),
    ("mail.send_draft", "web", False, False), ("calc.fix_value", "desktop", True, True),
    ("calc.fix_value", "desktop", False, True), ("calc.fix_value", "desktop", True, False)]


def make_lake(root) -> Lake:
    lake = Lake(root)
    commit_shard(lake, ShardCommit("judge", RUN, "j1", "judge[0]"), {"judgments": [
        {"trajectory_id": f"trj_{i}", "task_id": f"t_{skill}", "skill_id": skill, "domain": domain, "judge": "judge",
         "success": judged, "verifier_success": verified, "accepted": judged and verified}
        for i, (skill, domain, judged, verified) in enumerate(OUTCOMES)]})
    return lake


def test_blind_spots_per_skill_in_the_catalog_and_the_report(tmp_path):
    lake = make_lake(tmp_path / "lake")
    con = open_catalog(lake)
    skills = con.execute("SELECT skill_id, tp, fn, recall FROM judge_audit WHERE level = 'skill' "
                         "ORDER BY skill_id").fetchall()
    assert skills == [("calc.fix_value", 1, 1, 0.5), ("mail.send_draft", 2, 0, 1.0),
                      ("tools.column_std_with_code", 0, 3, 0.0)]
    blind = con.execute("SELECT skill_id, tp, fn, recall FROM judge_blind_spots").fetchall()
    assert blind == [("tools.column_std_with_code", 0, 3, 0.0)]
    judge = next(s for s in build_sections(lake, RUN) if s.anchor == "judge")
    title, table = judge.tables[1]
    assert title == "judge against verifier per skill (lowest recall first)"
    assert [(r["skill"], r["tp"], r["fn"]) for r in table] == [
        ("tools.column_std_with_code", 0, 3), ("calc.fix_value", 1, 1), ("mail.send_draft", 2, 0)]


def test_stats_prints_the_blind_spots(tmp_path):
    make_lake(tmp_path / "lake")
    done = subprocess.run([sys.executable, "-m", "guiforge.cli", "stats", "--lake", str(tmp_path / "lake")],
                          capture_output=True, text=True, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    lines = [" ".join(line.replace("│", " ").split()) for line in done.stdout.splitlines()]
    assert "judge tools.column_std_with_code 4 0 3 0.0 0.0" in lines, done.stdout
    assert "judge desktop 3 1 1 0 1 0.5 0.5 0.3333 -0.5 2" in lines, done.stdout  # per domain, with kappa
