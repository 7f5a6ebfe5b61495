"""The judge and rl_select stages on a real small lake (gates and rollouts in real Chromium
with the scripted teacher): the offline OCR judge, model judges behind the OpenAI- and
Anthropic-format local servers through the SDKs (images in the requests), correction turns
and parse failures with a fallback judge, acceptance exclusions and the catalog views."""

from __future__ import annotations

import json

import pytest

from guiforge.catalog import open_catalog
from guiforge.cli import _print_stats
from guiforge.judge.evidence import build_view
from guiforge.lake import Lake
from guiforge.lake.images import ImageReader, MissingImage
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.report.tiers import tiers_by_domain
from guiforge.testing.model_server import ModelServer

CARD = "mail.reply_invoice_total"
RUN = "judged"


def config(judges: dict | None = None, models: dict | None = None) -> dict:
    return {
        "name": "judged", "seed": 4, "workers": 2,
        "models": {"world_builder": {"provider": "offline"}, "teacher": {"provider": "offline"},
                   "judge": {"provider": "offline"}, **(models or {})},
        "stages": {
            "personas": {"count": 8, "shard_size": 4}, "worlds": {}, "skills": {"include": [CARD]},
            "task_candidates": {"per_world": 2}, "task_gates": {"package_gate": False},
            "rollouts": {"samples": 6, "tasks": 4, "tasks_per_shard": 2, "concurrency": 2,
                         "phone_screenshots": "css", "noise": {"wrong_value": 0.3, "early_stop": 0.05}},
            "judge": {"key_frames": 3},
            "rl_select": {"budget": 2, "min_valid": 3, "band": [0.1, 0.9]},
            **(judges or {}),
        },
    }


def run(lake_dir, judges: dict | None = None, models: dict | None = None) -> Lake:
    run_pipeline(build_pipeline(config(judges, models), "x.yaml", lake=str(lake_dir), run_id=RUN), executor="local")
    return Lake(lake_dir)


@pytest.fixture(scope="module")
def lake_dir(tmp_path_factory):
    lake_dir = tmp_path_factory.mktemp("judge") / "lake"
    run(lake_dir)
    return lake_dir


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("LOCAL_KEY", "sk-local")


def rows(lake: Lake, table: str) -> list[dict]:
    return lake.read_table(table).to_pylist()


def test_offline_judge_writes_a_judgment_for_every_trajectory(lake_dir):
    lake = Lake(lake_dir)
    trajectories = {t["trajectory_id"]: t for t in rows(lake, "trajectories")}
    judgments = [j for j in rows(lake, "judgments") if j["judge"] == "judge"]
    assert len(trajectories) >= 12 and {j["trajectory_id"] for j in judgments} == set(trajectories)
    steps = {}
    for s in rows(lake, "steps"):
        steps.setdefault(s["trajectory_id"], []).append(s)
    for j in judgments:
        t = trajectories[j["trajectory_id"]]
        assert j["judge_model"] == "offline:ocr-judge" and j["success"] is not None and 0 <= j["score"] <= 1
        assert j["verifier_success"] == t["success"] and j["agrees"] == (j["success"] == t["success"])
        last = max(steps[t["trajectory_id"]], key=lambda s: s["step_index"])
        assert j["evidence_images"][-1] == last["image_sha256"] and len(j["evidence_images"]) <= 3
        assert j["rationale"]
    # the offline judge is a judge of its own: it does not simply copy the verifier
    outcomes = {(j["success"], j["verifier_success"]) for j in judgments}
    assert (True, True) in outcomes and (False, False) in outcomes


def test_every_trajectory_not_accepted_is_an_exclusion_with_its_reason(lake_dir):
    lake = Lake(lake_dir)
    judgments = [j for j in rows(lake, "judgments") if j["judge"] == "judge"]
    excluded = {e["subject_id"]: e for e in rows(lake, "exclusions") if e["stage"] == "judge"}
    assert all(j["accept_policy"] == "both" for j in judgments)  # every task here has a verifier
    for j in judgments:
        if j["accepted"]:
            assert j["success"] and j["verifier_success"] and j["trajectory_id"] not in excluded
        else:
            e = excluded[j["trajectory_id"]]
            assert e["reason"] == j["accept_reason"] and e["subject_table"] == "trajectories"
            expected = ("verifier failed" if not j["verifier_success"] and not j["success"]
                        else "judge and verifier disagree")
            assert e["reason"].startswith(expected), e
    assert any(j["accepted"] for j in judgments) and not all(j["accepted"] for j in judgments)


def test_every_trajectory_gets_a_quality_tier_that_refines_acceptance(lake_dir, capsys):
    """judgments.quality_tier (guiforge.judge.tiers): gold and silver are the accepted ones,
    gold the shortest of its task; guiforge stats and the report show the tiers by domain."""
    lake = Lake(lake_dir)
    trajectories = {t["trajectory_id"]: t for t in rows(lake, "trajectories")}
    judgments = [j for j in rows(lake, "judgments") if j["judge"] == "judge"]
    assert {j["trajectory_id"] for j in judgments} == set(trajectories)
    for j in judgments:
        assert (j["quality_tier"] in ("gold", "silver")) == j["accepted"], j
    accepted = [trajectories[j["trajectory_id"]] for j in judgments if j["accepted"]]
    for j in judgments:
        if j["quality_tier"] == "gold":
            t = trajectories[j["trajectory_id"]]
            shortest = min(a["n_steps"] for a in accepted if a["task_id"] == t["task_id"])
            assert t["n_steps"] <= 1.25 * shortest and j["score"] >= 0.8
    assert {j["quality_tier"] for j in judgments} >= {"gold", "reject"}
    table = tiers_by_domain(lake)
    assert table[-1]["domain"] == "all" and table[-1]["trajectories"] == len(trajectories)
    assert table[-1]["gold"] == sum(j["quality_tier"] == "gold" for j in judgments)
    _print_stats(str(lake_dir), None)
    assert "quality tiers by domain" in capsys.readouterr().out


def test_the_judge_never_sees_the_agents_claim():
    trajectory = {"trajectory_id": "trj_1", "env_failure": False, "success": True, "score": 1.0}
    task = {"task_id": "t", "domain": "web", "instruction": "Reply with the total.", "rubric_json": "{\"x\": 1}"}
    steps = [{"step_index": 0, "image_sha256": "a", "feedback": "typed", "error": None, "target_json": None,
              "thought": "I am sure this is done", "action": {"type": "type", "text": "42"}},
             {"step_index": 1, "image_sha256": "b", "feedback": "", "error": None, "target_json": None,
              "thought": "done", "action": {"type": "terminate", "status": "success"}}]
    view = build_view(trajectory, task, steps)
    history = view.history()
    assert "42" in history and "success" not in history and "sure" not in history and "done" not in history
    assert view.steps[1].action == {"type": "terminate"}


def test_rl_select_keeps_mixed_tasks_in_the_band_and_excludes_the_rest(lake_dir):
    lake = Lake(lake_dir)
    by_task: dict[str, list[bool]] = {}
    for t in rows(lake, "trajectories"):
        by_task.setdefault(t["task_id"], []).append(bool(t["success"]))
    pool = rows(lake, "rl_tasks")
    excluded = {e["subject_id"]: e for e in rows(lake, "exclusions") if e["stage"] == "rl_select"}
    assert len(pool) + len(excluded) == len(by_task)  # every task rolled out: chosen or excluded
    for r in pool:
        outcomes = by_task[r["task_id"]]
        assert 0 < sum(outcomes) < len(outcomes) and r["success_rate"] == sum(outcomes) / len(outcomes)
        task = json.loads(r["task_json"])
        assert task["task_id"] == r["task_id"] and task["rubric_json"] and task["setup_json"]
    for task_id, e in excluded.items():
        outcomes = by_task[task_id]
        if all(outcomes) or not any(outcomes):
            assert "no outcome variance" in e["reason"]
        else:
            assert e["gate"] in ("rl_band", "rl_quota")
    assert len(pool) <= 2


def test_catalog_views_funnel_and_audit(lake_dir):
    con = open_catalog(Lake(lake_dir))
    funnel = con.execute("SELECT domain, trajectories, accepted, rl_pool FROM funnel WHERE run_id = ?",
                         [RUN]).fetchall()
    assert sum(r[1] for r in funnel) == len(rows(Lake(lake_dir), "trajectories")) and sum(r[3] for r in funnel) == len(rows(Lake(lake_dir), "rl_tasks"))
    audit = con.execute("SELECT level, n, tp, fp, tn, fn, accuracy, kappa, disagreeing FROM judge_audit "
                        "WHERE judge = 'judge' ORDER BY level").fetchall()
    overall = [a for a in audit if a[0] == "all"][0]
    assert overall[1] == len(rows(Lake(lake_dir), "trajectories")) == sum(overall[2:6])
    assert len(overall[8]) == overall[3] + overall[5]  # fp + fn trajectories listed by id
    assert {a[0] for a in audit} == {"all", "domain", "skill"}
    sft = con.execute("SELECT count(DISTINCT trajectory_id) FROM sft_rows").fetchone()[0]
    accepted = con.execute("SELECT count(*) FROM judgments WHERE accepted").fetchone()[0]
    assert sft == accepted


def test_images_by_hash(lake_dir):
    lake = Lake(lake_dir)
    reader = ImageReader(lake)
    shas = sorted({s["image_sha256"] for s in rows(lake, "steps") if s["image_sha256"]})[:5]
    got = reader.get_many(shas + shas)
    assert set(got) == set(shas) and all(v[:4] == b"\x89PNG" or v[:2] == b"\xff\xd8" for v in got.values())
    reads = reader.reads
    assert reader.get(shas[0]) == got[shas[0]] and reader.reads == reads  # served from the cache
    with pytest.raises(MissingImage):
        reader.get("0" * 64)
    assert reader.get_many(["0" * 64], missing_ok=True) == {}


class VerdictModel:
    """A VLM judge stand-in: passes trajectories whose history shows an answer or a send,
    and counts the screenshots it was sent."""

    def __init__(self, malformed: bool = False):
        self.malformed = malformed
        self.images = 0

    def __call__(self, provider: str, body: dict) -> str:
        content = body["messages"][-1]["content"]
        if self.malformed:
            return "The agent did fine, I think." if len(body["messages"]) < 4 else '{"success": "maybe"}'
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        self.images += sum(p.get("type") in ("image", "image_url") for p in parts)
        text = " ".join(p.get("text", "") for p in parts if p.get("type") == "text")
        ok = "click" in text
        return json.dumps({"success": ok, "score": 0.9 if ok else 0.1, "rationale": "from the history",
                           "evidence_steps": [0]})


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_model_judge_through_each_provider_with_images(lake_dir, key, provider):
    model = VerdictModel()
    with ModelServer(model) as server:
        base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
        judge = {"provider": provider, "model": "local-vlm", "base_url": base, "api_key_env": "LOCAL_KEY",
                 "prices": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}
        name = f"judge_{provider}"
        lake = run(lake_dir, {name: {"uses": "judge", "model_role": "fallback_judge"}}, {"fallback_judge": judge})
    judgments = [j for j in rows(lake, "judgments") if j["judge"] == name]
    assert len(judgments) == len(rows(lake, "trajectories")) and all(j["judge_model"] == f"{provider}:local-vlm" for j in judgments)
    assert all(j["input_tokens"] > 0 and j["cost_usd"] > 0 and j["prompt_hash"] for j in judgments)
    assert model.images >= len(judgments)  # every request carried its key screenshots
    first = server.requests[0].body
    kind = "image_url" if provider == "openai" else "image"
    assert any(p.get("type") == kind for p in first["messages"][-1]["content"])
    system = first["system"] if provider == "anthropic" else first["messages"][0]["content"]
    assert "judge" in system and ("web browser" in system or "mobile phone" in system)


def test_malformed_judge_replies_are_retried_then_a_parse_failure_then_the_fallback(lake_dir, key):
    model = VerdictModel(malformed=True)
    with ModelServer(model) as server:
        judge = {"provider": "openai", "model": "bad-vlm", "base_url": server.openai_base_url,
                 "api_key_env": "LOCAL_KEY", "max_parse_attempts": 2}
        stages = {"judge_bad": {"uses": "judge", "model_role": "fallback_judge"},
                  "judge_rescued": {"uses": "judge", "model_role": "fallback_judge", "fallback_role": "judge"}}
        lake = run(lake_dir, stages, {"fallback_judge": judge})
    retries = [r for r in server.requests if len(r.body["messages"]) > 2]
    assert retries and "Your JSON was rejected" in retries[0].body["messages"][-1]["content"]
    bad = [j for j in rows(lake, "judgments") if j["judge"] == "judge_bad"]
    assert len(bad) == len(rows(lake, "trajectories")) and all(j["parse_failure"] and j["success"] is None for j in bad)
    assert all(not j["accepted"] and "parse failure" in j["accept_reason"] for j in bad if j["verifier_success"])
    rescued = [j for j in rows(lake, "judgments") if j["judge"] == "judge_rescued"]
    assert all(j["judge_model"] == "offline:ocr-judge" and j["success"] is not None for j in rescued)
    assert all(any(f.startswith("fallback_after:openai:bad-vlm") for f in j["flags"]) for j in rescued)


def test_every_model_role_of_a_stage_enters_its_shard_fingerprint(tmp_path, key):
    from guiforge.orchestration.context import RunContext
    from guiforge.orchestration.engine import shard_fingerprint
    from guiforge.stages.base import ShardPlan

    def fingerprints(fallback_model: str) -> dict[str, str]:
        models = {"fallback_judge": {"provider": "openai", "model": fallback_model, "base_url": "http://127.0.0.1:9",
                                     "api_key_env": "LOCAL_KEY"}}
        cfg = config({"judge": {"fallback_role": "fallback_judge"}}, models)
        pipeline = build_pipeline(cfg, "x.yaml", lake=str(tmp_path / "lake"), run_id=RUN)
        ctx = RunContext(pipeline, Lake(tmp_path / "lake"))
        assert pipeline.stage("judge").model_roles() == ["judge", "fallback_judge"]
        assert "fallback_judge" in pipeline.model_roles()
        return {s.name: shard_fingerprint(ctx, s, ShardPlan(key="k")) for s in pipeline.stages}

    a, b = fingerprints("vlm-a"), fingerprints("vlm-b")
    assert a["judge"] != b["judge"]  # the fallback judge's identity changes the judge's shards
    assert all(a[name] == b[name] for name in a if name != "judge")  # and nothing else's


def _typed_view(apps: list[str], typed: str) -> object:
    trajectory = {"trajectory_id": "trj_2", "env_failure": False}
    task = {"task_id": "t2", "domain": "mobile", "apps": apps, "max_steps": 10,
            "instruction": "Add 'Book a parking space' to my Party to-do note."}
    steps = [{"step_index": 0, "image_sha256": "a", "feedback": "tapped “Party to-do”", "error": None,
              "target_json": None, "thought": "", "action": {"type": "tap", "x": 500, "y": 212}},
             {"step_index": 1, "image_sha256": "b", "feedback": "typed 20 characters into “Note body”", "error": None,
              "target_json": None, "thought": "", "action": {"type": "type", "text": typed}},
             {"step_index": 2, "image_sha256": "b", "feedback": "episode ended", "error": None, "target_json": None,
              "thought": "", "action": {"type": "terminate", "status": "success"}}]
    view = build_view(trajectory, task, steps)
    view.key_frames = [(0, "a"), (1, "b")]
    return view


def test_typing_into_an_app_that_saves_as_it_goes_is_finished():
    """Notes keep an edit as it is typed: the final screen showing the typed line is the
    commit. In an app with a Send or Save to press, typing alone is not."""
    from guiforge.judge.offline import OfflineJudge

    screens = {"a": "Notes Party to-do", "b": "Party to-do Buy balloons Book a parking space"}
    note = OfflineJudge().judge(_typed_view(["notes"], "Book a parking space"), screens)
    assert note.success and "unfinished" not in note.flags, note.rationale
    unsent = OfflineJudge().judge(_typed_view(["mail"], "Book a parking space"), screens)
    assert not unsent.success and "unfinished" in unsent.flags
    missing = OfflineJudge().judge(_typed_view(["notes"], "Book a parking space"), {"a": "Notes", "b": "Party to-do"})
    assert "unfinished" in missing.flags  # the screen does not show it: nothing says it was kept


def test_times_match_across_twelve_and_twenty_four_hour_clocks():
    from guiforge.judge.offline import _number_in, number_forms

    assert _number_in("13:30", number_forms("Thu, 25 Jan · 1:30 PM – 2:30 PM"))
    assert _number_in("09:00", number_forms("9:00 AM"))
    assert _number_in("1:30 PM", number_forms("13:30 - 14:30"))
    assert _number_in("00:15", number_forms("12:15 a.m."))
    assert not _number_in("14:30", number_forms("1:30 PM"))


def test_a_repeated_terminal_command_is_a_loop_though_the_window_grows():
    """A terminal's frame changes with every command (the scrollback grows), so a command run
    three times in a row is a loop whatever its frames; a click on changing frames is not."""
    from guiforge.judge.offline import _loop

    def view(action: dict) -> object:
        steps = [{"step_index": i, "image_sha256": f"frame{i}", "feedback": "exit code 0", "error": None,
                  "target_json": None, "thought": "", "action": action} for i in range(3)]
        return build_view({"trajectory_id": "trj_3", "env_failure": False},
                          {"task_id": "t3", "domain": "desktop", "apps": ["terminal"], "max_steps": 10,
                           "instruction": "Total the amounts."}, steps)

    assert _loop(view({"type": "bash", "text": "cat sales.csv"})) == [0, 1, 2]
    assert _loop(view({"type": "click", "x": 10, "y": 10})) == []
