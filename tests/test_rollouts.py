"""Skills -> gated tasks -> rollouts in real Chromium, with the scripted teacher and with a
teacher model behind each provider's wire format (through the official SDKs)."""

from __future__ import annotations

import json

import pytest

from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.testing.model_server import ModelServer

CARD = "mail.reply_invoice_total"


def config(name: str, teacher: dict, samples: int, tasks: int, package_gate: bool = True,
           gates: dict | None = None, rollouts: dict | None = None) -> dict:
    return {
        "name": name, "seed": 4, "workers": 2,
        "models": {"world_builder": {"provider": "offline"}, "teacher": teacher},
        "stages": {
            "personas": {"count": 6, "shard_size": 2}, "worlds": {},
            "skills": {"include": [CARD]},
            "task_candidates": {"per_world": 2}, "task_gates": {"package_gate": package_gate, **(gates or {})},
            "rollouts": {"samples": samples, "tasks": tasks, "tasks_per_shard": 2, **(rollouts or {})},
        },
    }


@pytest.fixture(scope="module")
def scripted_lake(tmp_path_factory) -> Lake:
    """Gates and rollouts with their thread pools on (the shipped default runs them so)."""
    lake = tmp_path_factory.mktemp("rollouts") / "lake"
    cfg = config("scripted", {"provider": "offline"}, 8, 4, gates={"concurrency": 2, "shard_size": 3},
                 rollouts={"concurrency": 2, "phone_screenshots": "css"})
    run_pipeline(build_pipeline(cfg, "x.yaml", lake=str(lake)), executor="local")
    return Lake(lake)


def test_gate_shards_are_slices_of_the_candidates(scripted_lake):
    candidates = scripted_lake.read_table("task_candidates").num_rows
    gate_shards = list(scripted_lake.manifest_entries(scripted_lake.runs("tasks")[0], "task_gates"))
    assert len(gate_shards) == sum(-(-n // 3) for n in _rows_per_candidate_shard(scripted_lake))
    written = sum(e["outputs"].get("tasks", {}).get("rows", 0) + e["outputs"].get("exclusions", {}).get("rows", 0)
                  for e in gate_shards)
    assert written == candidates  # every candidate judged exactly once: a task or an exclusion


def _rows_per_candidate_shard(lake: Lake) -> list[int]:
    entries = lake.manifest_entries(lake.runs("tasks")[0], "task_candidates")
    return [e["outputs"]["task_candidates"]["rows"] for e in entries if e["outputs"].get("task_candidates")]


def test_phone_frames_in_css_pixels(scripted_lake):
    steps = scripted_lake.read_table("steps").to_pylist()
    sizes = {(s["image_width"], s["image_height"]) for s in steps if s["image_sha256"]}
    phones = {size for size in sizes if size[0] < size[1]}  # portrait: the phone's frames
    assert phones and all(w <= 412 and h <= 839 for w, h in phones), sizes  # CSS pixels, never device ones
    harness = [json.loads(t["harness_json"]) for t in scripted_lake.read_table("trajectories").to_pylist()]
    assert {h.get("phone_screenshots") for h in harness} == {"css", None}  # mobile rows say so, web rows not


def test_every_gated_task_passed_its_package_gate(scripted_lake):
    tasks = scripted_lake.read_table("tasks").to_pylist()
    assert tasks and all(t["skill_id"] == CARD for t in tasks)
    for t in tasks:
        gate = json.loads(t["gate_json"])["package"]
        assert gate["passed"] and not gate.get("skipped") and gate["actions"] >= 5
    assert {t["domain"] for t in tasks} == {"web", "mobile"}


def test_k_samples_per_task_with_mixed_outcomes(scripted_lake):
    trajectories = scripted_lake.read_table("trajectories").to_pylist()
    by_task: dict[str, list[dict]] = {}
    for t in trajectories:
        by_task.setdefault(t["task_id"], []).append(t)
    n_tasks = scripted_lake.read_table("tasks").num_rows
    assert len(by_task) == min(4, n_tasks) >= 2 and all(len(v) == 8 for v in by_task.values())
    assert sorted(t["sample_index"] for t in next(iter(by_task.values()))) == list(range(8))
    assert not any(t["env_failure"] for t in trajectories), [t["error"] for t in trajectories if t["error"]]
    outcomes = [{t["success"] for t in v} for v in by_task.values()]
    assert any(o == {True, False} for o in outcomes), [(t["success"], t["score"], t["criteria_json"], t["error"]) for t in trajectories][:12]  # the noise makes outcomes vary per task
    assert all(t["teacher_model"] == "offline:scripted-teacher" for t in trajectories)


def test_steps_reference_images_stored_once(scripted_lake):
    steps = scripted_lake.read_table("steps").to_pylist()
    images = scripted_lake.read_table("images")
    hashes = images.column("sha256").to_pylist()
    assert len(hashes) == len(set(hashes))
    assert {s["image_sha256"] for s in steps} <= set(hashes)
    assert len(steps) > len(hashes)  # identical frames (the inbox after reset, ...) are shared
    step = next(s for s in steps if s["action"] and s["action"]["type"] in ("click", "tap"))
    assert 0 <= step["action"]["x"] <= 999 and step["image_width"] > 0
    pixels = json.loads(step["action_pixels_json"])
    assert pixels["width"] == step["image_width"] and 0 <= pixels["x"] < step["image_width"]
    assert step["thought"] and json.loads(step["raw_output"])["action"]["type"] == step["action"]["type"]


def test_steps_record_their_prompt_and_target(scripted_lake):
    steps = scripted_lake.read_table("steps").to_pylist()
    hashes = set(scripted_lake.read_table("images", columns=["sha256"]).column("sha256").to_pylist())
    for s in steps:
        prompt = json.loads(s["prompt_json"])
        assert len(prompt) == s["prompt_messages"] and prompt[0]["role"] == "system"
        shown = [p["image"] for m in prompt for p in m["parts"] if isinstance(p, dict)]
        assert shown and shown[-1] == s["image_sha256"] and set(shown) <= hashes  # rebuildable from the lake
    taps = [s for s in steps if s["action"] and s["action"]["type"] in ("click", "tap") and s["target_json"]]
    assert taps
    for s in taps:
        x, y, w, h = json.loads(s["target_json"])["box"]
        px = json.loads(s["action_pixels_json"])
        assert x <= px["x"] < x + w and y <= px["y"] < y + h


def test_every_step_records_progress_and_successes_end_at_one(scripted_lake):
    """Dense progress (guiforge.harness.progress): each step's progress on the state it left,
    deltas that add up from s0, and 1.0 after the last step of every successful sample."""
    trajectories = scripted_lake.read_table("trajectories").to_pylist()
    steps: dict[str, list[dict]] = {}
    for s in scripted_lake.read_table("steps").to_pylist():
        steps.setdefault(s["trajectory_id"], []).append(s)
    succeeded = [t for t in trajectories if t["success"]]
    failed = [t for t in trajectories if t["success"] is False]
    assert succeeded and failed
    for t in trajectories:
        mine = sorted(steps[t["trajectory_id"]], key=lambda s: s["step_index"])
        assert all(s["progress"] is not None and 0.0 <= s["progress"] <= 1.0 for s in mine)
        start = mine[0]["progress"] - mine[0]["progress_delta"]
        for before, after in zip(mine, mine[1:], strict=False):
            assert after["progress_delta"] == pytest.approx(after["progress"] - before["progress"])
        assert sum(s["progress_delta"] for s in mine) == pytest.approx(mine[-1]["progress"] - start)
        for s in mine:
            flipped = json.loads(s["criteria_flips_json"] or "{}")
            assert bool(flipped) or s["progress_delta"] == 0.0
            if s["progress_delta"] < 0:
                assert s["undoes_progress"]
        if t["success"]:
            assert mine[-1]["progress"] == 1.0
        elif t["success"] is False:
            assert mine[-1]["progress"] < 1.0


class GuiModel:
    """Plays a teacher model: opens the app, sends one malformed reply, then stops."""

    def __call__(self, provider: str, body: dict) -> str:
        messages = body["messages"]
        assistant = [m for m in messages if m["role"] == "assistant"]
        last = messages[-1]["content"]
        last_text = last if isinstance(last, str) else " ".join(p.get("text", "") for p in last if p.get("type") == "text")
        if "could not be used" in last_text:
            return '{"thought": "Sorry, here it is.", "action": {"type": "terminate", "status": "success"}}'
        if not assistant:
            action = {"type": "open_app", "app": "mail"} if "open_app" in json.dumps(body) else {"type": "goto", "text": "mail"}
            return json.dumps({"thought": "I'll open the mail app.", "action": action})
        return "I am done, I think"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_teacher_model_through_each_provider(tmp_path, monkeypatch, provider):
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    with ModelServer(GuiModel()) as server:
        base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
        teacher = {"provider": provider, "model": "local-vlm", "base_url": base, "api_key_env": "LOCAL_KEY"}
        pipeline = build_pipeline(config(f"model-{provider}", teacher, 2, 2, package_gate=False), "x.yaml", lake=str(tmp_path / "lake"))
        run_pipeline(pipeline, executor="local")
        lake = Lake(tmp_path / "lake")
        trajectories = lake.read_table("trajectories").to_pylist()
        assert len(trajectories) == 4
        assert all(t["teacher_model"] == f"{provider}:local-vlm" for t in trajectories)
        assert all(t["input_tokens"] > 0 and t["output_tokens"] > 0 for t in trajectories)
        assert all(not t["env_failure"] and t["success"] is False for t in trajectories), \
            [t["error"] for t in trajectories]
        steps = lake.read_table("steps").to_pylist()
        assert {s["step_index"] for s in steps} == {0, 1}
        second = [s for s in steps if s["step_index"] == 1]
        assert all(s["action"]["type"] == "terminate" for s in second)  # after the parse error was fed back
        # Screenshots went to the model as images in the provider's own format.
        kind = "image_url" if provider == "openai" else "image"
        first = server.requests[0].body["messages"][-1]["content"]
        assert any(p.get("type") == kind for p in first)
