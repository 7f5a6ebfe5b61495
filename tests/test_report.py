"""`guiforge report` on a lake from a real run (data/pipelines/tiny.yaml: real Chromium and
LibreOffice rollouts), with curation rows (judgments, RL pool, relabels, diagnoses, a second
round) committed beside them, opened in Debian's Chromium: no console errors, every image
decoded, every plot drawn. An empty lake still gives a page whose sections say "none yet"."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from markupsafe import escape
from playwright.sync_api import sync_playwright

from guiforge.catalog import connect_catalog, write_catalog
from guiforge.envs.web.browser import CHROMIUM, CHROMIUM_ARGS
from guiforge.lake import Lake
from guiforge.lake.writer import ShardCommit, commit_shard
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.paths import DATA_DIR, PROJECT_ROOT
from guiforge.report import write_report
from guiforge.report.page import PLOTLY_ASSET
from guiforge.report.queries import agreement_figures
from guiforge.yamlfile import load_yaml

TINY = DATA_DIR / "pipelines" / "tiny.yaml"


def _curation_rows(lake: Lake, run_id: str) -> dict[str, list[dict]]:
    """What the judge, rl_select, relabel, diagnose and resynthesize stages write, derived
    from the run's own trajectories (the judge disagrees with the verifier once)."""
    tasks = {t["task_id"]: t for t in lake.read_table("tasks", run_id).to_pylist()}
    trajectories = lake.read_table("trajectories", run_id).to_pylist()
    steps = lake.read_table("steps", run_id).to_pylist()
    judgments, exclusions = [], []
    for i, r in enumerate(trajectories):
        task = tasks[r["task_id"]]
        verdict = bool(r["success"]) != (i == 0)
        judgments.append({"trajectory_id": r["trajectory_id"], "task_id": r["task_id"], "domain": task["domain"],
                          "skill_id": task["skill_id"], "judge": "ocr", "judge_model": "offline:ocr",
                          "success": verdict, "verifier_success": bool(r["success"]),
                          "agrees": verdict == bool(r["success"]), "rationale": "final screen matches the goal",
                          "accepted": verdict and bool(r["success"]), "accept_policy": "both",
                          "accept_reason": "judge and verifier agree" if verdict == bool(r["success"]) else "disagree",
                          "quality_tier": "gold" if verdict and r["success"] else "reject"})
        if not judgments[-1]["accepted"]:
            exclusions.append({"stage": "judge", "gate": "accept",
                               "reason": f"trajectory {r['trajectory_id']} not accepted under policy both",
                               "subject_id": r["trajectory_id"], "subject_table": "trajectories"})
    first = next(iter(tasks.values()))
    rl = [{"task_id": first["task_id"], "domain": first["domain"], "skill_id": first["skill_id"],
           "n_samples": 2, "n_valid": 2, "n_success": 1, "success_rate": 0.5, "selected_reason": "band"}]
    relabels = [{"trajectory_id": s["trajectory_id"], "step_index": s["step_index"], "thought": "I click it",
                 "consistent": s["step_index"] % 3 != 0, "failed_check": None if s["step_index"] % 3 else "element",
                 "attempts": 1, "mode": "reasoning"} for s in steps[:12]]
    diagnoses = [{"diagnosis_id": "d1", "task_id": first["task_id"], "level": "action",
                  "failure_mode": "wrong_element", "analysis": "clicked the header, not the row", "round": 0}]
    child = {**first, "task_id": first["task_id"] + "-r1", "parent_task_id": first["task_id"], "round": 1,
             "diagnosis_id": "d1"}
    return {"judgments": judgments, "exclusions": exclusions, "rl_tasks": rl, "relabels": relabels,
            "diagnoses": diagnoses, "tasks": [child]}


@pytest.fixture(scope="module")
def full_lake(tmp_path_factory) -> tuple[Lake, str]:
    root = tmp_path_factory.mktemp("report") / "lake"
    data, _ = load_yaml(TINY)
    # a teacher that types wrong values and never fixes them: failures to report, whatever tasks are drawn
    data["stages"]["rollouts"]["noise"] = {"wrong_value": 0.5, "recover": 0.0}
    pipeline = build_pipeline(data, str(TINY), lake=str(root))
    run_pipeline(pipeline, executor="local")
    lake = Lake(root)
    for i, (table, rows) in enumerate(_curation_rows(lake, pipeline.run_id).items()):
        commit_shard(lake, ShardCommit(f"curation-{table}", pipeline.run_id, f"fp{i}", table), {table: rows})
    return lake, pipeline.run_id


def _open_in_chromium(path) -> dict:
    """Load the page in Debian's Chromium (flags as the environments use) and read back what
    it drew: console errors, page errors, images and plots."""
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS), headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
            page.goto(path.as_uri(), wait_until="load")
            page.wait_for_function("() => [...document.querySelectorAll('.plot > div > div')]"
                                   ".every(d => d.querySelector('.main-svg'))", timeout=60_000)
            drawn = page.evaluate("""() => ({
                images: [...document.images].map(i => ({ok: i.complete && i.naturalWidth > 0, w: i.naturalWidth})),
                plots: [...document.querySelectorAll('.js-plotly-plot')].map(p => ({
                    id: p.id, svg: p.querySelectorAll('.main-svg').length,
                    marks: p.querySelectorAll('.trace path, .trace rect, .point path, .bars path').length})),
                sections: Object.fromEntries([...document.querySelectorAll('section')].map(
                    s => [s.id, s.querySelector('.none') ? s.querySelector('.none').textContent : '']))
            })""")
        finally:
            browser.close()
    return {"errors": errors, **drawn}


def test_report_of_a_real_run_renders_in_chromium(full_lake, tmp_path):
    lake, run_id = full_lake
    out = tmp_path / "report.html"
    write_report(lake, out, run_id)
    text = out.read_text()
    assert re.findall(r'<script[^>]* src="([^"]+)"', text) == [PLOTLY_ASSET]  # nothing fetched from elsewhere
    assert f'src="{PLOTLY_ASSET}"' in text and (tmp_path / PLOTLY_ASSET).stat().st_size > 1_000_000
    assert out.stat().st_size <= 1_000_000 and text.count("Plotly.newPlot") == 11
    drawn = _open_in_chromium(out)
    assert drawn["errors"] == []
    # Funnel, 4 rollout figures, exclusions, judge, RL pool, rounds, relabels, diagnoses.
    assert len(drawn["plots"]) == 11, drawn["plots"]
    assert all(p["svg"] and p["marks"] for p in drawn["plots"]), drawn["plots"]
    assert drawn["images"] and all(i["ok"] for i in drawn["images"]), drawn["images"]
    # Every section has data: none says "none yet".
    assert not any(drawn["sections"].values()), drawn["sections"]
    assert 'class="badge accepted"' in text and 'class="badge rejected"' in text
    tasks = {t["instruction"] for t in lake.read_table("tasks", run_id).to_pylist()}
    assert any(str(escape(instruction)) in text for instruction in tasks)  # beside its screenshots
    # Every figure links to its rows in the viewer; the fix-next list comes from the diagnoses.
    assert text.count("the rows behind this figure") == 11
    fix = text.split('id="fix-next"', 1)[1].split("</section>", 1)[0]
    assert "wrong_element" in fix and "clicked the header, not the row" in fix
    assert "/rows/trajectories?run=" in fix and "outcome=failure" in fix
    # Reasons grouped by pattern: one row for the judge's rejections, however many trajectories.
    exclusions = text.split('id="exclusions"', 1)[1].split("</section>", 1)[0]
    rejected = sum(1 for j in _curation_rows(lake, run_id)["judgments"] if not j["accepted"])
    assert rejected > 1 and exclusions.count("<td>trajectory &lt;id&gt; not accepted under policy both</td>") == 1
    assert f"pattern=trajectory+%3Cid%3E+not+accepted+under+policy+both\">{rejected}</a>" in exclusions
    # Provenance in the header: the pipeline file's hash, the seed, the code.
    header = text.split("</header>", 1)[0]
    assert "tiny.yaml sha256" in header and "<dt>seed</dt><dd>5</dd>" in header and "guiforge 0.1.0" in header


def test_empty_lake_says_none_yet_and_still_loads(tmp_path):
    out = tmp_path / "empty.html"
    write_report(Lake(tmp_path / "lake"), out)
    drawn = _open_in_chromium(out)
    assert drawn["errors"] == [] and drawn["plots"] == [] and drawn["images"] == []
    for section in ("funnel", "rollouts", "judge", "rl-pool", "rounds", "relabels", "diagnoses", "samples"):
        assert drawn["sections"][section].startswith("none yet"), (section, drawn["sections"])


def test_cli_report_writes_the_page_and_names_it(full_lake, tmp_path):
    lake, run_id = full_lake
    out = tmp_path / "cli.html"
    done = subprocess.run([sys.executable, "-m", "guiforge.cli", "report", "--lake", lake.uri, "--run-id", run_id,
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert str(out) in done.stdout.replace("\n", "") and out.stat().st_size > 50_000
    missing = subprocess.run([sys.executable, "-m", "guiforge.cli", "report", "--lake", lake.uri, "--run-id", "nope",
                              "--out", str(tmp_path / "x.html")], capture_output=True, text=True, timeout=300)
    assert missing.returncode == 2 and "run 'nope'" in missing.stderr and "Traceback" not in missing.stderr


def test_kappa_matches_hand_computation():
    # 20 items: 8 both success, 2 judge-only, 4 verifier-only, 6 both failure.
    f = agreement_figures(tp=8, fp=2, fn=4, tn=6)
    expected = (10 * 12 + 10 * 8) / 400
    assert f["agreement"] == pytest.approx(0.7)
    assert f["kappa"] == pytest.approx((0.7 - expected) / (1 - expected))
    assert f["precision"] == pytest.approx(0.8) and f["recall"] == pytest.approx(8 / 12)


def readme_questions() -> list[str]:
    text = (PROJECT_ROOT / "README.md").read_text()
    section = text.split("## Three questions, answered in SQL", 1)[1].split("\n## ", 1)[0]
    return [block.split("```", 1)[0].strip() for block in section.split("```sql")[1:]]


def test_readme_questions_run_on_the_catalog(full_lake):
    lake, _ = full_lake
    write_catalog(lake)
    queries = readme_questions()
    assert len(queries) == 3
    con = connect_catalog(lake)
    try:
        answers = [con.execute(q).fetchall() for q in queries]
    finally:
        con.close()
    by_skill, dropped, _near_half = answers
    trajectories = lake.read_table("trajectories").num_rows
    assert by_skill and sum(r[2] for r in by_skill) <= trajectories
    # The judge's rejections committed by the fixture are the only exclusions.
    assert dropped and {(r[0], r[1]) for r in dropped} == {("judge", "accept")}


def test_every_run_of_a_lake_counts_once_per_run(full_lake, tmp_path):
    """Two runs holding the same ids (the same config under another run id) count twice,
    never squared by a join across runs."""
    from guiforge.report import queries
    from guiforge.report.views import open_views

    lake, run_id = full_lake
    both = Lake(tmp_path / "both")
    for i, table in enumerate(lake.tables()):
        rows = lake.read_table(table, run_id).to_pylist()
        for run in (run_id, "copy"):
            commit_shard(both, ShardCommit(f"copy-{table}", run, f"fp{i}", table),
                         {table: [{**r, "run_id": run} for r in rows]})
    con, filled = open_views(lake, run_id)
    single = {(r["step"], r["domain"]): r["tasks"] for r in queries.funnel(con, filled)}
    con, filled = open_views(both)
    double = {(r["step"], r["domain"]): r["tasks"] for r in queries.funnel(con, filled)}
    assert double == {k: 2 * v for k, v in single.items()}
    trajectories = sum(r["trajectories"] for r in queries.success_by_domain(con))
    assert trajectories == 2 * lake.read_table("trajectories", run_id).num_rows
    page = Path(write_report(both, tmp_path / "both.html")).read_text()
    assert "all runs" in page and f"<td>trajectories</td><td>{trajectories}</td><td>2</td>" in page
