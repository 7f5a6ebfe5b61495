"""`guiforge view` on a real run (the tiny pipeline: real Chromium and LibreOffice rollouts)
judged by a priced model (the local server speaking OpenAI's wire format, named like a model
data/prices.yaml prices), opened in Debian's Chromium: navigate to the run, filter the
trajectories to a failing skill, open one, step through it with the keyboard, and every
frame's screenshot shows its action drawn where the step acted. `guiforge stats` prints time
per stage and the cost per accepted SFT row; the report and the viewer show the same."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import numpy as np
import pyarrow.compute as pc
import pytest
from PIL import Image
from playwright.sync_api import sync_playwright

from guiforge.envs.web.browser import CHROMIUM, CHROMIUM_ARGS
from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.report import write_report
from guiforge.report.costs import load_prices
from guiforge.report.stats import money, run_figures
from guiforge.testing.model_server import ModelServer
from guiforge.view import serve_in_thread

JUDGE_MODEL = "gpt-4o-mini"  # priced in data/prices.yaml
VERDICT = {"success": True, "score": 0.9, "rationale": "The final screen shows the goal met.", "evidence_steps": []}
MARK = (255, 0, 230)  # the player's drawing colour


def config() -> dict:
    return {
        "name": "viewtest", "seed": 5, "workers": 2,
        "models": {"world_builder": {"provider": "offline"}, "task_author": {"provider": "offline"},
                   "teacher": {"provider": "offline"},
                   "judge": {"provider": "openai", "model": JUDGE_MODEL, "base_url": None, "api_key_env": "LOCAL_KEY"}},
        "stages": {"personas": {"count": 4, "shard_size": 4}, "worlds": {}, "skills": {},
                   "task_candidates": {"per_world": 3}, "task_gates": {"package_gate": False, "shard_size": 12},
                   # wrong values typed and never fixed: failing skills to filter to, whatever tasks are drawn
                   "rollouts": {"samples": 2, "tasks": 4, "tasks_per_shard": 2, "concurrency": 2,
                                "phone_screenshots": "css", "noise": {"wrong_value": 0.5, "recover": 0.0}},
                   "judge": {"key_frames": 2}},
    }


@pytest.fixture(scope="module")
def judged_lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("view") / "lake"
    with pytest.MonkeyPatch.context() as mp, ModelServer(lambda provider, body: json.dumps(VERDICT)) as server:
        mp.setenv("LOCAL_KEY", "sk-local")
        cfg = config()
        cfg["models"]["judge"]["base_url"] = server.openai_base_url
        pipeline = build_pipeline(cfg, "viewtest.yaml", lake=str(root))
        run_pipeline(pipeline, executor="local")
        assert server.requests, "the judge never called the model server"
    return Lake(root), pipeline.run_id


def test_stats_prints_time_per_stage_and_cost_per_accepted_sft_row(judged_lake):
    lake, run_id = judged_lake
    done = subprocess.run([sys.executable, "-m", "guiforge.cli", "stats", "--lake", lake.uri, "--run-id", run_id],
                          capture_output=True, text=True, timeout=300, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "time per stage" in text and re.search(r"│ rollouts\s+│\s+2 │", text), text
    # The cost, computed here from the rows and the prices file: judge tokens x price / SFT rows.
    price = load_prices()[JUDGE_MODEL]
    judgments = lake.read_table("judgments", run_id)
    tokens_in, tokens_out = (pc.sum(judgments.column(c)).as_py() for c in ("input_tokens", "output_tokens"))
    assert tokens_in and tokens_out
    cost = (tokens_in * price.input_per_mtok + tokens_out * price.output_per_mtok) / 1e6
    accepted = {r["trajectory_id"] for r in judgments.to_pylist() if r["accepted"]}
    sft_rows = sum(1 for s in lake.read_table("steps", run_id).to_pylist() if s["trajectory_id"] in accepted)
    assert accepted and sft_rows
    per_row = money(cost / sft_rows)
    assert f"per accepted SFT row {per_row} ({sft_rows} rows of {len(accepted)}" in text.replace("\n", " "), text
    assert f"openai:{JUDGE_MODEL}" in text and "prices.yaml" in text
    figures = run_figures(lake, run_id)
    assert money(figures["costs"]["per_unit"]["accepted_sft_row"]) == per_row
    assert figures["costs"]["total_cost_usd"] == pytest.approx(cost)
    assert {s["stage"] for s in figures["stages"]} >= {"rollouts", "judge"}
    assert all(s["wall_s"] > 0 and s["cpu_s"] is not None for s in figures["stages"])


def test_report_and_viewer_show_the_same_figures(judged_lake, tmp_path):
    lake, run_id = judged_lake
    per_row = money(run_figures(lake, run_id)["costs"]["per_unit"]["accepted_sft_row"])
    out = tmp_path / "report.html"
    write_report(lake, out, run_id)
    page = out.read_text()
    assert f"per accepted SFT row {per_row}" in page
    assert out.stat().st_size <= 1_000_000, out.stat().st_size  # plotly.js is the file beside it
    assert (tmp_path / next(p.name for p in tmp_path.glob("plotly-*.min.js"))).stat().st_size > 1_000_000
    assert "http://127.0.0.1:8765/rows/trajectories?run=" in page  # figures link into the viewer
    server, viewer, base = serve_in_thread(lake)
    try:
        status, _, body = viewer.handle(f"/run/{run_id}", {})
    finally:
        server.shutdown()
        viewer.close()
    assert status == 200 and f"per accepted SFT row {per_row}" in body.decode()


def _marks(png: bytes, box: tuple[float, float, float, float] | None = None) -> int:
    """Pixels of the drawing colour in a screenshot (inside ``box`` where given)."""
    img = Image.open(io.BytesIO(png)).convert("RGB")
    if box:
        img = img.crop(tuple(int(v) for v in box))
    px = np.asarray(img, dtype=np.int16)
    return int(((px[..., 0] > 200) & (px[..., 1] < 90) & (px[..., 2] > 170)).sum())


def test_browser_filters_to_a_failing_skill_and_steps_through_a_trajectory(judged_lake, tmp_path):
    lake, run_id = judged_lake
    server, viewer, base = serve_in_thread(lake)
    errors: list[str] = []
    frames_checked = 0
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS), headless=True)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(base + "/")
            page.click(f"text={run_id}")
            assert run_id in page.locator("#provenance").inner_text() and "seed" in page.locator("#provenance").inner_text()
            # A failing skill with screenshots (tools trajectories have none), from the run page.
            failing = [r for r in page.locator("#skills tr").all()[1:]
                       if r.locator("td").count() == 5 and r.locator("td").nth(0).inner_text() != "tools"
                       and r.locator("td").nth(4).inner_text() not in ("0", "")]
            assert failing, page.locator("#skills").inner_text()
            skill = failing[0].locator("td").nth(1).inner_text()
            expected = int(failing[0].locator("td").nth(4).inner_text())
            # Filter the trajectories table to it through the form.
            page.click("header nav >> text=trajectories")
            page.fill("input[name=run]", run_id)
            page.select_option("select[name=skill]", skill)
            page.select_option("select[name=outcome]", "failure")
            page.click("button:has-text('filter')")
            assert page.locator("#total").inner_text() == f"{expected} row(s)"
            headers = [h.inner_text().strip(" ▲▼") for h in page.locator("#rows th").all()]
            for row in page.locator("#rows tr").all()[1:]:
                cells = [c.inner_text() for c in row.locator("td").all()]
                assert cells[headers.index("skill_id")] == skill and cells[headers.index("outcome")] == "failure"
            page.screenshot(path=str(tmp_path / "filtered.png"), full_page=True)
            # Open the first one and step through it with the keyboard.
            page.locator("#rows a[href^='/trajectory/']").first.click()
            page.wait_for_selector("#overlay")
            steps = json.loads(page.locator("#steps-data").text_content())
            assert steps
            assert "The final screen shows the goal met." in page.locator("#judges").inner_text()
            assert "criterion" in page.locator("#verifier").inner_text()
            for k, step in enumerate(steps):
                if k:
                    page.keyboard.press("ArrowRight")
                page.wait_for_function("i => document.getElementById('position').textContent.startsWith("
                                       "'step ' + i + ' ')", arg=step["index"])
                assert page.evaluate("location.hash") == f"#step={step['index']}"
                if not step["image"]:
                    continue
                page.wait_for_function("() => { const i = document.getElementById('shot'); "
                                       "return i.complete && i.naturalWidth > 0 && i.src.includes('/image/') }")
                shot = page.locator("#frame").screenshot(path=str(tmp_path / f"step-{step['index']}.png"))
                assert _marks(shot) > 30, f"step {step['index']}: nothing drawn ({step['action']})"
                pixels, action = step["pixels"] or {}, step["action"] or {}
                if action.get("x") is not None and pixels.get("x") is not None:
                    size = page.evaluate("() => { const r = document.getElementById('shot').getBoundingClientRect();"
                                         " return [r.width, r.height]; }")
                    x, y = pixels["x"] * size[0] / step["width"], pixels["y"] * size[1] / step["height"]
                    near = (max(0, x - 20), max(0, y - 20), x + 20, y + 20)
                    assert _marks(shot, near) > 10, f"step {step['index']}: the point is not drawn at ({x}, {y})"
                if action.get("text") or action.get("keys"):
                    label = page.locator("#overlay .mark-text").text_content()
                    assert (action.get("text") or "+".join(action["keys"]))[:40] in label
                frames_checked += 1
            page.keyboard.press("Home")
            page.wait_for_function("() => document.getElementById('position').textContent.startsWith('step 0 ')")
            page.screenshot(path=str(tmp_path / "player.png"), full_page=True)
            browser.close()
    finally:
        server.shutdown()
        viewer.close()
    assert errors == []
    assert frames_checked >= 2


def test_compare_two_runs_shows_what_changed(judged_lake):
    lake, run_id = judged_lake
    other = Lake(lake.uri)
    cfg = {"name": "viewtest", "seed": 6, "workers": 1,
           "stages": {"personas": {"count": 3, "shard_size": 3}, "worlds": {}}}
    run_pipeline(build_pipeline(cfg, "other.yaml", lake=other.uri), executor="local")
    second = build_pipeline(cfg, "other.yaml", lake=other.uri).run_id
    server, viewer, base = serve_in_thread(lake)
    try:
        status, _, body = viewer.handle("/compare", {"a": run_id, "b": second})
        index = viewer.handle("/", {})[2].decode()
    finally:
        server.shutdown()
        viewer.close()
    text = body.decode()
    assert status == 200 and "pipeline.config.seed" in text and "stages.rollouts" in text
    assert run_id in index and second in index and 'action="/compare"' in index
