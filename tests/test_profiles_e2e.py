"""Each model profile runs the pipeline end to end (personas to rollouts, real Chromium)
against the local server answering as that family's model does, through the official
SDKs, on a pinned screen size: the server plays the family (its published format, its
point where the provider shows the image to the model: Anthropic shrinks, Qwen's processor
smart-resizes, Qwen3-VL answers 0-1000) and replays the actions of a noiseless scripted
run of the same tasks; every click of the model's run lands on the element the scripted
run's click landed on, and every task succeeds.

CI runs one size per profile (a 1920x1080 browser and a phone in device pixels, where
Claude's screenshots are shrunk); ``--battery`` runs 1280x720, 1536x864 and 1920x1080 with
the phone sizes.
"""

from __future__ import annotations

import json

import pytest

from guiforge import presentation
from guiforge.envs.actions import POINTER_ACTIONS, Action
from guiforge.harness.formats.family_models import WIRE, FamilyModel
from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.testing.model_server import ModelServer

CARD = "mail.reply_invoice_total"  # web and mobile tasks: search, open, read an attachment, reply
QUIET = {k: 0.0 for k in ("misclick", "recover", "skip", "wrong_value", "early_stop", "malformed", "missed_scroll",
                          "spread")}
PROFILES = {  # profile: (family the server plays, model name)
    "claude-computer-use": ("claude", "claude-sonnet-4-5"),
    "qwen3-vl": ("qwen3-vl", "Qwen/Qwen3-VL-8B-Instruct"),
    "qwen2.5-vl": ("qwen2.5-vl", "Qwen/Qwen2.5-VL-7B-Instruct"),
    "ui-tars-1.5": ("ui-tars-1.5", "ByteDance-Seed/UI-TARS-1.5-7B"),
    "openai-tools": ("openai-tools", "gpt-4.1"),
    "openai-cua": ("openai-cua", "computer-use-preview"),
}
# (web viewport, phone viewport, phone screenshots)
CI_SIZE = ((1920, 1080), (412, 839), "device")
SIZES = [((1280, 720), (360, 760), "css"), ((1536, 864), (412, 839), "css"), CI_SIZE]


def config(name: str, teacher: dict, phone_screenshots: str) -> dict:
    return {
        "name": name, "seed": 5, "workers": 2,
        "models": {"world_builder": {"provider": "offline"}, "teacher": teacher},
        "stages": {
            "personas": {"count": 2, "shard_size": 2}, "worlds": {}, "skills": {"include": [CARD]},
            "task_candidates": {"per_world": 2}, "task_gates": {"package_gate": False},
            "rollouts": {"samples": 1, "tasks": 2, "tasks_per_shard": 2, "noise": QUIET,
                         "phone_screenshots": phone_screenshots, "max_parse_retries": 1},
        },
    }


def run(tmp_path, name: str, teacher: dict, size) -> dict:
    """Run the pipeline on the pinned sizes; each task's instruction -> its trajectory and steps."""
    web, phone, shots = size
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(presentation.VIEWPORTS, "web", (web,))
        mp.setitem(presentation.VIEWPORTS, "mobile", (phone,))
        cfg = config(name, teacher, shots)
        run_pipeline(build_pipeline(cfg, "x.yaml", lake=str(tmp_path / name)), executor="local")
    lake = Lake(tmp_path / name)
    tasks = {t["task_id"]: t for t in lake.read_table("tasks").to_pylist()}
    steps: dict[str, list[dict]] = {}
    for s in lake.read_table("steps").to_pylist():
        steps.setdefault(s["trajectory_id"], []).append(s)
    out = {}
    for t in lake.read_table("trajectories").to_pylist():
        instruction = tasks[t["task_id"]]["instruction"]
        assert instruction not in out, "two tasks share an instruction: the oracle cannot tell them apart"
        out[instruction] = {"trajectory": t, "domain": tasks[t["task_id"]]["domain"],
                            "steps": sorted(steps.get(t["trajectory_id"], []), key=lambda s: s["step_index"])}
    return out


@pytest.fixture(scope="module")
def scripted(tmp_path_factory):
    """The noiseless scripted teacher's runs, per size (the oracle the families replay)."""
    cache: dict = {}

    def get(size):
        key = repr(size)
        if key not in cache:
            cache[key] = run(tmp_path_factory.mktemp("scripted"), "scripted", {"provider": "offline"}, size)
            assert cache[key] and all(r["trajectory"]["success"] for r in cache[key].values()), \
                "the noiseless scripted run must succeed"
        return cache[key]

    return get


def check_profile(tmp_path, monkeypatch, scripted, profile: str, size) -> None:
    family, model = PROFILES[profile]
    oracle_runs = scripted(size)

    def oracle(instruction: str, step: int) -> Action | None:
        steps = oracle_runs.get(instruction, {}).get("steps", [])
        return Action(**{k: v for k, v in steps[step]["action"].items() if v is not None}) if step < len(steps) else None

    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    responder = FamilyModel(family, oracle)
    with ModelServer(responder) as server:
        wire = WIRE[family]
        base = server.openai_base_url if wire == "openai" else server.anthropic_base_url
        teacher = {"provider": wire, "model": model, "base_url": base, "api_key_env": "LOCAL_KEY",
                   "model_profile": profile}
        got = run(tmp_path, f"as-{family}", teacher, size)
        bodies = [r.body for r in server.requests]
    assert set(got) == set(oracle_runs)
    shift = 1 if family == "claude" else 0  # Claude looks first: a screenshot step
    clicks = 0
    for instruction, want in oracle_runs.items():
        mine = got[instruction]
        assert mine["trajectory"]["success"], (profile, size, mine["trajectory"]["error"], mine["steps"][-1]["error"])
        steps = mine["steps"][shift:]
        if shift:
            assert mine["steps"][0]["action"]["type"] == "wait" and mine["steps"][0]["action"]["amount"] == 0
        assert [s["action"]["type"] for s in steps] == [s["action"]["type"] for s in want["steps"]]
        for s, w in zip(steps, want["steps"], strict=True):
            assert not json.loads(s["attempts_json"])[0]["error"], s["attempts_json"]  # no reply refused
            if s["action"]["type"] in POINTER_ACTIONS and s["action"]["type"] not in ("scroll", "swipe"):
                target, meant = json.loads(s["target_json"] or "null"), json.loads(w["target_json"] or "null")
                assert meant and target and (target["id"], target["label"]) == (meant["id"], meant["label"]), \
                    (profile, size, s["step_index"], target, meant)
                clicks += 1
    assert clicks >= 4
    # What the server saw: each family's images as the profile sizes them.
    seen = {received for received, _ in responder.perceived}
    if profile == "claude-computer-use":
        assert all(w * h <= 1_150_000 and max(w, h) <= 1568 for w, h in seen), seen
        assert any(b.get("tools") for b in bodies) and all(
            b.get("tool_choice") == {"type": "auto", "disable_parallel_tool_use": True} for b in bodies if b.get("tools"))
    if profile in ("openai-tools", "openai-cua"):
        assert all(b.get("parallel_tool_calls") is False for b in bodies)
    if profile == "openai-cua":  # the Responses API, past actions replayed with their screenshots
        assert all("input" in b and b["tools"][0]["type"] == "computer_use_preview" for b in bodies)
        later = [b["input"] for b in bodies if any(i.get("type") == "computer_call" for i in b["input"])]
        assert later and all(any(i.get("type") == "computer_call_output" for i in items) for items in later)
    if profile in ("qwen2.5-vl", "ui-tars-1.5"):
        assert all(w % 28 == 0 and h % 28 == 0 for w, h in seen), seen  # sent already smart-resized


@pytest.mark.parametrize("profile", list(PROFILES))
def test_profile_clicks_land_on_their_targets(tmp_path, monkeypatch, scripted, profile):
    check_profile(tmp_path, monkeypatch, scripted, profile, CI_SIZE)


@pytest.mark.battery
@pytest.mark.parametrize("size", SIZES, ids=[f"{w[0]}x{w[1]}+{p[0]}x{p[1]}-{s}" for w, p, s in SIZES])
@pytest.mark.parametrize("profile", list(PROFILES))
def test_profile_battery_every_size(tmp_path, monkeypatch, scripted, profile, size):
    check_profile(tmp_path, monkeypatch, scripted, profile, size)
