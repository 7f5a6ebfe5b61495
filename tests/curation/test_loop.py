"""The loop on real rollouts (Chromium, scripted teacher): relabel -> diagnose ->
resynthesize -> the same gates and rollouts again; then the relabeler and the diagnoser as
models behind the local OpenAI- and Anthropic-format servers, through the official SDKs."""

from __future__ import annotations

import json
import re

import pytest

from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.testing.model_server import ModelServer

CARDS = ["mail.reply_invoice_total", "contacts.update_phone"]


def config(models: dict | None = None) -> dict:
    return {
        "name": "curate", "seed": 6, "workers": 2,
        "models": {"world_builder": {"provider": "offline"}, "teacher": {"provider": "offline"}, **(models or {})},
        "stages": {
            "personas": {"count": 4, "shard_size": 2}, "worlds": {}, "skills": {"include": CARDS},
            "task_candidates": {"per_world": 2}, "task_gates": {"concurrency": 2},
            "rollouts": {"samples": 4, "tasks": 6, "tasks_per_shard": 3, "concurrency": 2,
                         "phone_screenshots": "css",
                         "noise": {"misclick": 0.25, "recover": 0.3, "wrong_value": 0.2, "spread": 0.5}},
            "relabel": {"accepted_from": "verifier", "reasoning_ratio": 0.5},
            "diagnose": {"min_samples": 4},
            "resynthesize": {"rounds": 1, "tasks_per_round": 4},
        },
    }


@pytest.fixture(scope="module")
def loop_lake(tmp_path_factory):
    lake = tmp_path_factory.mktemp("loop") / "lake"
    pipeline = build_pipeline(config(), "loop.yaml", lake=str(lake), run_id="curate")
    run_pipeline(pipeline, executor="local")
    return Lake(lake)


def test_relabels_carry_verdicts_modes_and_spans(loop_lake):
    relabels = loop_lake.read_table("relabels").to_pylist()
    steps = {(s["trajectory_id"], s["step_index"]): s for s in loop_lake.read_table("steps").to_pylist()}
    successes = {t["trajectory_id"] for t in loop_lake.read_table("trajectories").to_pylist() if t["success"]}
    assert relabels and {r["trajectory_id"] for r in relabels} <= successes
    assert {r["mode"] for r in relabels} == {"reasoning", "direct"}
    for r in relabels:
        assert r["thought"] != r["original_thought"] and r["consistent"] is not None
        assert json.loads(r["assistant_text"][r["action_span_start"]:r["action_span_end"]])["type"] == \
            steps[(r["trajectory_id"], r["step_index"])]["action"]["type"]
    excluded = {(e["gate"], e["subject_id"]) for e in loop_lake.read_table("exclusions").to_pylist()}
    for r in relabels:
        key = f"{r['trajectory_id']}:{r['step_index']}"
        assert (("consistency", key) in excluded) == (not r["consistent"])
        assert (("duplicate_target", key) in excluded) == (r["duplicate_target"] and r["consistent"])


def test_diagnoses_and_round_one_tasks(loop_lake):
    diagnoses = loop_lake.read_table("diagnoses").to_pylist()
    assert {d["level"] for d in diagnoses} == {"action", "trajectory", "knowledge"}
    assert all(json.loads(d["evidence_json"]) and json.loads(d["proposal_json"]) for d in diagnoses)
    ids = {d["diagnosis_id"] for d in diagnoses if d["round"] == 0}
    tasks = loop_lake.read_table("tasks").to_pylist()
    round0 = {t["task_id"] for t in tasks if t["round"] == 0}
    round1 = [t for t in tasks if t["round"] == 1]
    candidates = [t for t in loop_lake.read_table("task_candidates").to_pylist() if t["round"] == 1]
    assert candidates and round1
    for t in candidates:
        assert t["parent_task_id"] in round0 and t["diagnosis_id"] in ids
    # every round-1 candidate is a task or an exclusion of the round-1 gates
    gated = {e["subject_id"] for e in loop_lake.read_table("exclusions").to_pylist() if e["stage"] == "task_gates_r1"}
    assert {t["task_id"] for t in candidates} == {t["task_id"] for t in round1} | gated
    # round 1 was rolled out and diagnosed on its own
    rolled = {t["task_id"] for t in loop_lake.read_table("trajectories").to_pylist()}
    assert {t["task_id"] for t in round1} <= rolled
    assert any(d["round"] == 1 for d in diagnoses)


def _user_text(body: dict) -> str:
    parts = []
    for m in body["messages"]:
        c = m["content"]
        if isinstance(c, str):
            parts.append(c)
        else:
            parts.extend(p.get("text", "") for p in c if isinstance(p, dict))
    return "\n".join(parts)


class Curator:
    """Relabels: a wrong element on the first try of a click (the retry fixes it), a wrong
    text for every type (stays inconsistent). Diagnoses: a fixed verdict."""

    def __call__(self, provider: str, body: dict) -> str:
        text = _user_text(body)
        if "You diagnose" in json.dumps(body):
            return json.dumps({"failure_mode": "wrong_element", "step_index": 0, "analysis": "it clicked elsewhere",
                               "proposal": "more tasks in this app"})
        action = json.loads(re.search(r"The action taken \(0-999 grid\): (\{.*\})\n", text).group(1))
        element = re.search(r"Element under the action's point: (.*)", text).group(1)
        label = json.loads(element).get("label") if element.startswith("{") else None
        retry = "Your JSON was rejected" in text
        kind = action["type"]
        if kind == "type":
            return json.dumps({"thought": "I'll type \u201csomething else\u201d."})
        if kind in ("click", "tap"):
            if not retry:
                return json.dumps({"thought": f"I'll {kind} \u201cNowhere at all\u201d."})
            why = " It is the control the task needs next, and nothing else on screen does this job, so it moves the task on."
            return json.dumps({"thought": (f"I'll {kind} \u201c{label}\u201d." if label else f"I'll {kind} it.") + why})
        if kind == "terminate":
            return json.dumps({"thought": "Everything is done, so I'll finish."})
        return json.dumps({"thought": f"I'll {kind.replace('_', ' ')} now."})


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_model_relabeler_and_diagnoser_through_the_sdks(loop_lake, monkeypatch, provider):
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    with ModelServer(Curator()) as server:
        base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
        model = {"provider": provider, "model": "local-curator", "base_url": base, "api_key_env": "LOCAL_KEY"}
        cfg = config({"relabeler": model, "diagnoser": model})
        del cfg["stages"]["resynthesize"]  # round 0's relabel and diagnose are enough here
        pipeline = build_pipeline(cfg, "loop.yaml", lake=str(loop_lake.root), run_id="curate")
        summaries = {s.stage: s for s in run_pipeline(pipeline, executor="local")}
        assert summaries["relabel"].ran and summaries["diagnose"].ran
        relabels = [r for r in loop_lake.read_table("relabels").to_pylist()
                    if r["relabeler_model"] == f"{provider}:local-curator"]
        assert relabels
        targets = {(s["trajectory_id"], s["step_index"]): json.loads(s["target_json"] or "null")
                   for s in loop_lake.read_table("steps").to_pylist()}
        clicks = [r for r in relabels if ('"type": "click"' in r["assistant_text"] or '"type": "tap"' in r["assistant_text"])
                  and (targets[(r["trajectory_id"], r["step_index"])] or {}).get("label")]
        # the first try named another element; the retry, told why, named the one under the point
        assert clicks and all(r["attempts"] == 2 and r["consistent"] for r in clicks)
        typed = [r for r in relabels if '"type": "type"' in r["assistant_text"]]
        assert all(not r["consistent"] and r["failed_check"] == "text" and r["attempts"] == 2 for r in typed)
        assert all(r["prompt_hash"] for r in relabels)
        images = [r for r in server.requests if "You write" in json.dumps(r.body)
                  and ("image_url" in json.dumps(r.body) or '"type": "image"' in json.dumps(r.body))]
        assert images  # the screenshot went to the relabeler as an image
        diagnoses = [d for d in loop_lake.read_table("diagnoses").to_pylist() if d["level"] == "action"]
        assert diagnoses and all(d["diagnoser_model"] == f"{provider}:local-curator" and d["prompt_hash"]
                                 for d in diagnoses if d["round"] == 0)
        assert {r.provider for r in server.requests} == {provider}
