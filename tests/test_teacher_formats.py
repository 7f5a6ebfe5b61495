"""A teacher model behind the local server answering the way GUI models do (OpenAI tool
calls, Anthropic tool_use, Qwen <tool_call> in content, UI-TARS text), through the official
SDKs: steps hold the right actions, k samples are k server calls, a malformed reply costs
one retry with the error fed back, every attempt is kept; the call cache replays a sample
and never serves a retry."""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image

from guiforge.envs.actions import Action, to_pixels
from guiforge.harness.formats import coord_system, get_format
from guiforge.lake import Lake
from guiforge.models import Message, ModelConfig, make_client
from guiforge.models.cache import CallCache
from guiforge.models.loop import run
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.testing.model_server import ModelServer

CARD = "mail.reply_invoice_total"  # web and mobile tasks


def config(name: str, teacher: dict, samples: int, tasks: int, rollouts: dict) -> dict:
    return {
        "name": name, "seed": 4, "workers": 2,
        "models": {"world_builder": {"provider": "offline"}, "teacher": teacher},
        "stages": {
            "personas": {"count": 4, "shard_size": 2}, "worlds": {}, "skills": {"include": [CARD]},
            "task_candidates": {"per_world": 2}, "task_gates": {"package_gate": False},
            "rollouts": {"samples": samples, "tasks": tasks, "tasks_per_shard": 2, **rollouts},
        },
    }

POINT = (500, 300)  # the grid point the model clicks first, written in its own convention
MALFORMED = {
    "openai_tools": {"content": None, "tool_calls": [{"function": {"name": "terminate",
                                                                   "arguments": '{"status": "success"'}}]},
    "anthropic_tools": {"content": [{"type": "tool_use", "name": "terminate", "input": ["success"]}]},
    "qwen_vl": '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": }\n</tool_call>',
    "uitars": "Thought: done\nAction: finished(status='success'",
}


def _parts(message: dict) -> list[dict]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def _image_size(message: dict) -> tuple[int, int] | None:
    for part in _parts(message):
        data = None
        if part.get("type") == "image_url":
            data = part["image_url"]["url"].split(",", 1)[1]
        elif part.get("type") == "image":
            data = part["source"]["data"]
        if data:
            return Image.open(io.BytesIO(base64.b64decode(data))).size
    return None


class FormatModel:
    """Plays a GUI model writing its own format: clicks a point, opens the mail app, sends
    one malformed reply, and after the error is fed back ends the task."""

    def __init__(self, name: str, coords: str):
        self.codec, self.coords = get_format(name), coords
        self.name = name

    def __call__(self, provider: str, body: dict):
        messages = body["messages"]
        system = body.get("system") or messages[0]["content"]
        mobile = "Android-style phone" in system
        last = messages[-1]
        text = " ".join(p.get("text", "") for p in _parts(last) if p.get("type") == "text")
        frame = _image_size(last) or (1280, 800)
        done = sum(m["role"] == "assistant" for m in messages)
        if "could not be used" in text:
            action, thought = Action(type="terminate", status="success"), "Sorry, here it is."
        elif done == 0:
            kind = "tap" if mobile else "click"
            action, thought = Action(type=kind, x=POINT[0], y=POINT[1]), "I'll press there."
        elif done == 1:
            action = Action(type="open_app", app="mail") if mobile else Action(type="goto", text="mail")
            thought = "I'll open the mail app."
        else:
            return MALFORMED[self.name]
        encoded = self.codec.encode(thought, action, frame=frame, coords=self.coords,
                                    domain="mobile" if mobile else "web")
        return {"content": encoded["content"]} if provider == "anthropic" and isinstance(encoded, dict) else encoded


CASES = {  # format: (provider, the role's coords, sampling)
    "openai_tools": ("openai", "pixels", {"temperature": 0.7, "top_p": 0.9, "seed": 11}),
    "anthropic_tools": ("anthropic", "grid1000", {"temperature": 1.0}),
    "qwen_vl": ("openai", "resized", {"temperature": 0.7}),
    "uitars": ("openai", "resized", {"max_pixels": 1280 * 28 * 28}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_teacher_in_its_own_format(tmp_path, monkeypatch, name):
    provider, coords, extra = CASES[name]
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    samples, tasks = 2, 2
    with ModelServer(FormatModel(name, coords)) as server:
        base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
        teacher = {"provider": provider, "model": "local-vlm", "base_url": base, "api_key_env": "LOCAL_KEY",
                   "action_format": name, "coords": coords, **extra}
        cfg = config(f"fmt-{name}", teacher, samples, tasks, {"phone_screenshots": "css", "max_parse_retries": 1})
        run_pipeline(build_pipeline(cfg, "x.yaml", lake=str(tmp_path / "lake")), executor="local")
        lake = Lake(tmp_path / "lake")
        trajectories = lake.read_table("trajectories").to_pylist()
        steps = lake.read_table("steps").to_pylist()
        requests = list(server.requests)

    assert len(trajectories) == samples * tasks
    assert all(not t["env_failure"] for t in trajectories), [t["error"] for t in trajectories]
    # Per trajectory: a click, an app, a malformed reply and its one retry = 4 calls, none
    # served from the cache for a second sample.
    assert len(requests) == 4 * samples * tasks
    by_step = {(s["trajectory_id"], s["step_index"]): s for s in steps}
    assert {s["step_index"] for s in steps} == {0, 1, 2}
    for t in trajectories:
        first, second, third = (by_step[(t["trajectory_id"], i)] for i in range(3))
        w, h = first["image_width"], first["image_height"]
        assert first["action"]["type"] in ("click", "tap")
        want, got = to_pixels(*POINT, w, h), to_pixels(first["action"]["x"], first["action"]["y"], w, h)
        tolerance = coord_system(coords, (w, h), max_pixels=extra.get("max_pixels")).tolerance_px()
        assert max(abs(want[0] - got[0]), abs(want[1] - got[1])) <= tolerance
        assert first["thought"] == "I'll press there."
        assert second["action"]["type"] in ("goto", "open_app")
        assert third["action"] == {**third["action"], "type": "terminate", "status": "success"}
        attempts = json.loads(third["attempts_json"])
        assert len(attempts) == 2 and attempts[0]["error"] and attempts[1]["error"] is None
        assert third["thought"] == "Sorry, here it is." and third["error"] is None
        assert len(json.loads(first["attempts_json"])) == 1
        lineage = json.loads(t["harness_json"])
        assert lineage["action_format"] == name and lineage["coords"] == coords
    retries = [r for r in requests if "could not be used" in json.dumps(r.body["messages"][-1])]
    assert len(retries) == samples * tasks
    bodies = [r.body for r in requests]
    if name in ("openai_tools", "anthropic_tools"):
        assert all(b.get("tools") for b in bodies)  # the action set went as native tools
        tool_names = {t.get("function", t).get("name") for t in bodies[0]["tools"]}
        assert {"terminate", "answer"} <= tool_names
        # Past actions go back as tool calls with their results, in the provider's shape.
        later = next(b["messages"] for b in bodies if sum(m["role"] == "assistant" for m in b["messages"]) == 2)
        if name == "openai_tools":
            calls = [m for m in later if m["role"] == "assistant"][0]["tool_calls"]
            results = [m for m in later if m["role"] == "tool"]
            assert calls[0]["id"] == results[0]["tool_call_id"] == "call_0_0" and len(results) == 2
        else:
            used = [b for m in later if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
            answered = [b for m in later if m["role"] == "user" for b in m["content"]
                        if isinstance(b, dict) and b.get("type") == "tool_result"]
            assert [b["id"] for b in used] == [b["tool_use_id"] for b in answered] == ["call_0_0", "call_1_0"]
    else:
        assert not any(b.get("tools") for b in bodies)
        system = bodies[0].get("system") or bodies[0]["messages"][0]["content"]
        assert ("<tools>" in system) if name == "qwen_vl" else ("## Action Space" in system)
    if name == "openai_tools":  # sampling per role, the seed offset per sample
        assert {b["seed"] for b in bodies} == {11, 12} and all(b["top_p"] == 0.9 for b in bodies)
        assert json.loads(trajectories[0]["harness_json"])["sampling"]["temperature"] == 0.7


def test_the_cache_keys_on_the_sample_and_never_serves_a_retry(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    with ModelServer(lambda provider, body: "ok") as server:
        config_ = ModelConfig(provider="openai", model="m", base_url=server.openai_base_url, api_key_env="LOCAL_KEY")
        client = make_client(config_, CallCache(Lake(tmp_path / "lake")))
        messages = [Message("user", "hello")]
        for sample in (0, 1, 0, 1):
            run(client.acomplete(messages, sample=sample))
        assert len(server.requests) == 2  # two samples, two calls; each replayed once
        run(client.acomplete(messages, sample=0, use_cache=False))
        run(client.acomplete(messages, sample=0, use_cache=False))
        assert len(server.requests) == 4  # a retry is a fresh draw every time
        run(client.acomplete(messages, sample=0))
        assert len(server.requests) == 4  # and did not overwrite sample 0's cached call
        run(client.aclose())


REPLIES = {  # what a server sends back, per wire format
    "openai": {"content": None, "reasoning_content": "The Send button is lit.",
               "tool_calls": [{"function": {"name": "click", "arguments": '{"x": 10, "y": 20}'}}]},
    "openai-reasoning": {"content": "<think>hidden draft</think>Clicking.", "reasoning": "Plan: click.",
                         "tool_calls": [{"function": {"name": "click", "arguments": {"x": 10, "y": 20}}}]},
    "anthropic": {"content": [{"type": "thinking", "thinking": "The Send button is lit."},
                              {"type": "text", "text": "Clicking."},
                              {"type": "tool_use", "name": "click", "input": {"x": 10, "y": 20}}]},
}


@pytest.mark.parametrize("case", list(REPLIES))
def test_providers_carry_tools_and_return_tool_calls_and_reasoning(monkeypatch, case):
    from guiforge.harness.episode import history_text
    from guiforge.harness.policies import ModelPolicy, TurnInput

    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    provider = case.split("-")[0]
    codec = get_format("anthropic_tools" if provider == "anthropic" else "openai_tools")
    tools = codec.render("web", None, coord_system("grid999")).tools
    with ModelServer(lambda p, body: REPLIES[case]) as server:
        base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
        cfg = ModelConfig(provider=provider, model="m", base_url=base, api_key_env="LOCAL_KEY", top_p=0.5, seed=3,
                          action_format=codec.name, cache=False)
        policy = ModelPolicy(make_client(cfg), sample=2)
        reply = policy.act(TurnInput([Message("system", "s"), Message("user", "go")], None, 0, tools=tools))  # type: ignore[arg-type]
        body = server.requests[0].body
        run(policy.client.aclose())
    thought, action = codec.parse(reply.model_reply(), "web", None, coord_system("grid999"))
    assert action == Action(type="click", x=10, y=20)
    if case == "openai-reasoning":
        assert thought == "Plan: click.\n\nhidden draft\n\nClicking."
    else:
        assert thought == ("The Send button is lit." if case == "openai" else "The Send button is lit.\n\nClicking.")
    assert history_text(reply).endswith('<tool_call>\n{"name": "click", "arguments": {"x": 10, "y": 20}}\n</tool_call>')
    assert "Send button" not in history_text(reply)  # reasoning stays out of later prompts
    names = [t.get("function", t)["name"] for t in body["tools"]]
    assert sorted(names) == sorted(["back", "click", "double_click", "drag", "goto", "hotkey", "key", "right_click",
                                    "scroll", "type", "wait", "answer", "terminate"])
    if provider == "openai":
        assert body["tools"][0]["type"] == "function" and (body["seed"], body["top_p"]) == (5, 0.5)
    else:
        assert "input_schema" in body["tools"][0] and body["top_p"] == 0.5 and "seed" not in body


def test_anthropic_computer_tool_goes_with_its_beta_header(monkeypatch):
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    codec = get_format("anthropic_computer")
    headers: list[dict] = []
    reply = {"content": [{"type": "tool_use", "name": "computer",
                          "input": {"action": "left_click", "coordinate": [640, 400]}}]}
    with ModelServer(lambda p, body: reply) as server:
        cfg = ModelConfig(provider="anthropic", model="m", base_url=server.anthropic_base_url, api_key_env="LOCAL_KEY",
                          action_format="anthropic_computer", cache=False)
        coords = coord_system("pixels", (1280, 800))
        tools = codec.render("desktop", "hybrid", coords).tools
        client = make_client(cfg)
        completion = run(client.acomplete([Message("user", "go")], tools=tools))
        run(client.aclose())
        headers.append(server.requests[0].body)
        beta = server.requests[0].headers.get("anthropic-beta")
    assert beta == "computer-use-2025-01-24"
    assert tools[0] == {"type": "computer_20250124", "name": "computer", "display_width_px": 1280,
                        "display_height_px": 800, "display_number": 1}
    assert tools[1] == {"type": "bash_20250124", "name": "bash"}
    assert headers[0]["tools"][:2] == tools[:2]
    from guiforge.harness.formats import ModelReply, ToolCall

    calls = [ToolCall(c["name"], c["arguments"], c["id"]) for c in completion.tool_calls]
    _, action = codec.parse(ModelReply(completion.text, calls), "desktop", "hybrid", coords)
    assert action == Action(type="click", x=500, y=500)


def test_a_refused_tool_call_is_answered_as_refused_and_a_reasoning_only_reply_is_read(tmp_path, monkeypatch):
    """Two calls in one turn are refused: the retry's tool results say so (not "Done"), the
    request asked for one call per turn; a reply whose action sits only in the reasoning
    field (vLLM's parser when </think> never closed) is read, not fed back as "no action"."""
    monkeypatch.setenv("LOCAL_KEY", "sk-local")

    def model(provider: str, body: dict):
        last = json.dumps(body["messages"][-1])
        phone = "phone" in body["messages"][0]["content"]
        name, key = ("open_app", "app") if phone else ("goto", "text")

        def open_(app: str) -> dict:
            return {"function": {"name": name, "arguments": json.dumps({key: app})}}

        if "could not be used" in last:
            return {"content": None, "tool_calls": [open_("mail")]}
        if sum(m["role"] == "assistant" for m in body["messages"]) == 0:
            return {"content": None, "tool_calls": [open_("mail"), open_("calendar")]}
        return {"content": "", "reasoning_content": 'The inbox is open, so I am done.\n<tool_call>\n'
                '{"name": "terminate", "arguments": {"status": "success"}}\n</tool_call>'}

    with ModelServer(model) as server:
        teacher = {"provider": "openai", "model": "local", "base_url": server.openai_base_url,
                   "api_key_env": "LOCAL_KEY", "model_profile": "openai-tools"}
        cfg = config("refused", teacher, 1, 1, {"phone_screenshots": "css", "max_parse_retries": 1})
        cfg["stages"]["skills"] = {"include": ["mail.reply_invoice_total"]}
        run_pipeline(build_pipeline(cfg, "x.yaml", lake=str(tmp_path / "lake")), executor="local")
        bodies = [r.body for r in server.requests]
    steps = sorted(Lake(tmp_path / "lake").read_table("steps").to_pylist(), key=lambda s: s["step_index"])
    assert [s["action"]["type"] for s in steps] in (["goto", "terminate"], ["open_app", "terminate"])
    assert steps[1]["error"] is None
    assert "holds 2 different actions" in json.loads(steps[0]["attempts_json"])[0]["error"]
    assert steps[1]["thought"] == "The inbox is open, so I am done."
    retry = next(b for b in bodies if "could not be used" in json.dumps(b["messages"][-1]))
    results = [m["content"] for m in retry["messages"] if m["role"] == "tool"]
    assert len(results) == 2 and all(r.startswith("Not done. Your reply could not be used: the reply holds 2")
                                     for r in results)
    assert all(b["parallel_tool_calls"] is False for b in bodies)
