"""Model profiles in one line, the image sizing they bring (sent at the size the provider
documents, read back in that frame), tool versions, one call per turn, validate's warnings,
and key names that mean one key in every executor."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from guiforge.envs.actions import Action
from guiforge.envs.desktop.xinput import chord as xdotool_chord
from guiforge.envs.desktop.xinput import xdotool_args
from guiforge.envs.keys import UnknownKey, canonical_key, canonical_keys
from guiforge.envs.web.keys import chord as playwright_chord
from guiforge.errors import ConfigError
from guiforge.harness.formats import coord_system, get_format
from guiforge.models import ImagePart, Message, ModelConfig, make_client
from guiforge.models.images import ImageSizing, fit_size, smart_resize
from guiforge.models.loop import run
from guiforge.models.profiles import PROFILES, profile_warnings
from guiforge.orchestration.compile import build_pipeline
from guiforge.testing.model_server import ModelServer


def png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 210, 220)).save(out, format="PNG")
    return out.getvalue()


def sent_size(body: dict) -> tuple[int, int]:
    for m in body["messages"]:
        for part in m["content"] if isinstance(m["content"], list) else []:
            data = part.get("source", {}).get("data") or part.get("image_url", {}).get("url", ",").split(",", 1)[1]
            if data:
                return Image.open(io.BytesIO(base64.b64decode(data))).size
    raise AssertionError("no image in the request")


# -- profiles -------------------------------------------------------------------------------
def test_a_profile_sets_the_family_in_one_line_and_written_settings_win():
    claude = ModelConfig(provider="anthropic", model="claude-sonnet-4-5", model_profile="claude-computer-use")
    assert (claude.action_format, claude.coords, claude.image_resize, claude.max_edge, claude.max_pixels,
            claude.tool_version) == ("anthropic_computer", "pixels", "fit", 1568, 1_150_000, "computer_20250124")
    assert ModelConfig(model="claude-opus-4-5", model_profile="claude-computer-use").tool_version == "computer_20251124"
    assert ModelConfig(model="claude-sonnet-4-6", model_profile="claude-computer-use").tool_version == "computer_20251124"
    opus47 = ModelConfig(model="claude-opus-4-7", model_profile="claude-computer-use")
    assert (opus47.max_edge, opus47.max_pixels) == (2576, 3_750_000)
    qwen3 = ModelConfig(model="Qwen/Qwen3-VL-8B-Instruct", model_profile="qwen3-vl")
    assert (qwen3.action_format, qwen3.coords) == ("qwen_vl", "grid1000")
    tars = ModelConfig(model_profile="ui-tars-1.5", max_pixels=1280 * 28 * 28)
    assert (tars.coords, tars.image_resize, tars.min_pixels, tars.max_pixels) == ("resized", "smart", 78_400, 1_003_520)
    assert ModelConfig(model_profile="qwen3-vl", coords="grid999").coords == "grid999"
    assert ModelConfig().identity() == ModelConfig(parallel_tool_calls=False).identity()  # old fingerprints hold


def test_an_unknown_profile_is_one_line_naming_the_field(tmp_path):
    cfg = {"name": "x", "models": {"teacher": {"provider": "openai", "model_profile": "qwen4-vl"}}, "stages": {}}
    with pytest.raises(ConfigError) as err:
        build_pipeline(cfg, "pipe.yaml", lake=str(tmp_path))
    text = str(err.value)
    assert "models.teacher" in text and "unknown model_profile 'qwen4-vl'" in text and "qwen3-vl" in text


def warnings(config: ModelConfig) -> list[str]:
    return profile_warnings("teacher", config, lambda name: get_format(name).default_coords)


def test_validate_warns_when_a_known_model_meets_an_unusual_convention():
    qwen3 = ModelConfig(provider="openai", model="Qwen/Qwen3-VL-8B-Instruct", action_format="qwen_vl")
    (line,) = warnings(qwen3)
    assert "answers in grid1000" in line and "model_profile: qwen3-vl" in line
    assert "resized (the format's default)" in line
    assert warnings(qwen3.model_copy(update={"coords": "grid1000"})) == []
    assert warnings(ModelConfig(model="Qwen/Qwen3-VL-8B-Instruct", model_profile="qwen3-vl")) == []
    bare_claude = ModelConfig(provider="anthropic", model="claude-sonnet-4-5", action_format="anthropic_computer")
    assert "sends screenshots at full size" in warnings(bare_claude)[0]
    wrong = ModelConfig(provider="openai", model="ByteDance-Seed/UI-TARS-1.5-7B", model_profile="qwen2.5-vl")
    assert "looks like a ui-tars-1.5 model" in warnings(wrong)[0]
    assert "speaks the anthropic wire" in warnings(ModelConfig(provider="openai", model="m", action_format="anthropic_tools",
                                                               model_profile="claude-computer-use"))[0]
    assert warnings(ModelConfig(provider="openai", model="gpt-4.1")) == []


def test_validate_prints_the_warnings(tmp_path):
    from typer.testing import CliRunner

    from guiforge.cli import app

    path = tmp_path / "pipe.yaml"
    path.write_text(f"name: w\nlake: {tmp_path / 'lake'}\nmodels:\n  teacher: {{provider: openai, "
                    "model: Qwen/Qwen3-VL-8B-Instruct, action_format: qwen_vl}\nstages:\n  personas: {count: 2}\n")
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "warning: models.teacher: Qwen/Qwen3-VL-8B-Instruct answers in grid1000" in result.output


# -- image sizing ---------------------------------------------------------------------------
def test_sizes_follow_the_documented_rules():
    assert fit_size(1920, 1080, 1568, 1_150_000) == (1429, 804)  # 0.74 of the screen
    assert fit_size(1536, 864, 1568, 1_150_000) == (1429, 804)
    assert fit_size(1280, 720, 1568, 1_150_000) == (1280, 720)  # within the limits: unchanged
    assert fit_size(1082, 2202, 1568, 1_150_000) == (751, 1529)
    assert smart_resize(1080, 1920) == (1092, 1932)
    assert ImageSizing("smart", max_pixels=1280 * 28 * 28, factor=28).size(1920, 1080) == (1316, 728)
    with pytest.raises(ValueError, match="unknown image resize"):
        ImageSizing("squash")


@pytest.mark.parametrize("model,version,beta", [("claude-sonnet-4-5", "computer_20250124", "computer-use-2025-01-24"),
                                                ("claude-opus-4-5", "computer_20251124", "computer-use-2025-11-24")])
def test_claude_sees_the_screenshot_at_the_size_it_is_told_and_clicks_land(monkeypatch, model, version, beta):
    """A 1920x1080 frame goes out as 1429x804, the computer tool declares 1429x804, and
    Claude's (714, 402) is the middle of the screen, not (714, 402) of the full frame."""
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    reply = {"content": [{"type": "tool_use", "name": "computer",
                          "input": {"action": "left_click", "coordinate": [714, 402]}}]}
    with ModelServer(lambda provider, body: reply) as server:
        cfg = ModelConfig(provider="anthropic", model=model, base_url=server.anthropic_base_url,
                          api_key_env="LOCAL_KEY", model_profile="claude-computer-use", cache=False)
        codec = get_format(cfg.action_format, tool_version=cfg.tool_version)
        coords = coord_system(cfg.coords, (1920, 1080), max_pixels=cfg.max_pixels, resize=cfg.image_resize,
                              max_edge=cfg.max_edge)
        tools = codec.render("desktop", "hybrid", coords).tools
        client = make_client(cfg)
        completion = run(client.acomplete([Message("user", ("look", ImagePart(png(1920, 1080))))], tools=tools))
        run(client.aclose())
        body, headers = server.requests[0].body, server.requests[0].headers
    assert sent_size(body) == (1429, 804)
    assert body["tools"][0] == {"type": version, "name": "computer", "display_width_px": 1429,
                                "display_height_px": 804, "display_number": 1}
    assert headers["anthropic-beta"] == beta  # the bash tool rides along under the computer tool's beta
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    from guiforge.harness.formats import ModelReply, ToolCall

    calls = [ToolCall(c["name"], c["arguments"], c["id"]) for c in completion.tool_calls]
    _, action = codec.parse(ModelReply(completion.text, calls), "desktop", "hybrid", coords)
    assert action == Action(type="click", x=500, y=500)
    assert "1429x804" in coords.describe()


def test_qwen25_images_go_out_smart_resized_and_openai_asks_for_one_call(monkeypatch):
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    with ModelServer(lambda provider, body: "ok") as server:
        cfg = ModelConfig(provider="openai", model="q", base_url=server.openai_base_url, api_key_env="LOCAL_KEY",
                          model_profile="qwen2.5-vl", cache=False)
        client = make_client(cfg)
        message = [Message("user", ("look", ImagePart(png(1920, 1080))))]
        run(client.acomplete(message))
        run(client.acomplete(message, tools=[{"name": "click", "parameters": {"type": "object"}}]))
        open_server = cfg.model_copy(update={"parallel_tool_calls": None})
        other = make_client(open_server)
        run(other.acomplete(message, tools=[{"name": "click", "parameters": {"type": "object"}}]))
        run(client.aclose())
        run(other.aclose())
        bodies = [r.body for r in server.requests]
    assert sent_size(bodies[0]) == (1932, 1092)
    assert "parallel_tool_calls" not in bodies[0]  # only where tools go: the API refuses it otherwise
    assert bodies[1]["parallel_tool_calls"] is False
    assert "parallel_tool_calls" not in bodies[2]  # null: a server that rejects the field


# -- key names --------------------------------------------------------------------------------
def test_every_spelling_of_a_key_means_one_key():
    for name in ("arrowdown", "ArrowDown", "Down", "down", "DOWN"):
        assert canonical_key(name) == "down"
    assert canonical_keys("ctrl+shift+s") == ["ctrl", "shift", "s"]
    assert canonical_keys(["Page_Down"]) == ["pagedown"] and canonical_keys(["Return"]) == ["enter"]
    assert canonical_keys(["cmd", "+"]) == ["meta", "+"] and canonical_keys("ctrl++") == ["ctrl", "+"]
    assert canonical_keys(["Page Down"]) == ["pagedown"] and canonical_keys(["KP_Enter"]) == ["enter"]
    with pytest.raises(UnknownKey, match="unknown key 'arrowdownn'"):
        canonical_key("arrowdownn")


def test_executors_press_the_key_meant_and_refuse_one_they_do_not_know():
    """UI-TARS's hotkey(key='arrowdown') was `xdotool key arrowdown`: exit 0, nothing pressed."""
    assert xdotool_args(Action(type="key", keys=["arrowdown"]), 1280, 720)[-1] == "Down"
    assert xdotool_chord(["ctrl", "pgdn"]) == "ctrl+Next" and xdotool_chord(["ctrl", "+"]) == "ctrl+plus"
    assert playwright_chord(["arrowdown"]) == "ArrowDown" and playwright_chord(["ctrl", "Page_Down"]) == "Control+PageDown"
    with pytest.raises(ValueError, match="unknown key 'hyper'"):
        xdotool_args(Action(type="hotkey", keys=["ctrl", "hyper"]), 1280, 720)
    with pytest.raises(ValueError, match="unknown key 'hyper'"):
        Action(type="hotkey", keys=["ctrl", "hyper"]).check_domain("desktop", "gui")


def test_every_profile_names_a_format_and_convention_that_exist():
    from guiforge.harness.formats import COORD_KINDS, format_names

    for profile in PROFILES.values():
        cfg = ModelConfig(model_profile=profile.name)
        assert cfg.action_format in format_names() and cfg.coords in COORD_KINDS, profile.name


def test_openai_computer_use_speaks_the_responses_api(monkeypatch):
    """computer_use_preview goes to /responses: system text as instructions, a past computer
    action replayed as a computer_call whose output is the screenshot that followed it, the
    other actions as flat function tools, one call per turn; a refused call's reason goes
    with its screenshot."""
    from guiforge.models.openai_responses import input_items

    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    reply = {"output": [{"type": "reasoning", "summary": [{"type": "summary_text", "text": "The Send button."}]},
                        {"type": "computer_call", "action": {"type": "click", "button": "left", "x": 640, "y": 360}}]}
    shot, later = png(1280, 720), png(1280, 720)
    messages = [Message("system", "You operate a browser."), Message("user", "Task: send it"),
                Message("user", ("Step 0.", ImagePart(shot))),
                Message("assistant", "", ({"id": "call_0_0", "name": "computer",
                                           "arguments": {"action": {"type": "type", "text": "hi"}}},)),
                Message("user", ("Step 1. Feedback: typed", ImagePart(later)))]
    with ModelServer(lambda provider, body: reply) as server:
        cfg = ModelConfig(provider="openai", model="computer-use-preview", base_url=server.openai_base_url,
                          api_key_env="LOCAL_KEY", model_profile="openai-cua", seed=3, cache=False)
        codec = get_format(cfg.action_format)
        coords = coord_system(cfg.coords, (1280, 720))
        client = make_client(cfg)
        completion = run(client.acomplete(messages, tools=codec.render("web", None, coords).tools))
        run(client.aclose())
        record = server.requests[0]
    assert record.provider == "responses" and "seed" not in record.body and record.body["parallel_tool_calls"] is False
    body = record.body
    assert body["instructions"] == "You operate a browser." and body["store"] is False
    assert body["tools"][0] == {"type": "computer_use_preview", "display_width": 1280, "display_height": 720,
                                "environment": "browser"}
    assert {t["name"] for t in body["tools"][1:]} == {"answer", "goto", "terminate"}
    assert all(t["type"] == "function" and "parameters" in t for t in body["tools"][1:])
    kinds = [i.get("type") or i["role"] for i in body["input"]]
    assert kinds == ["user", "user", "computer_call", "computer_call_output", "user"]
    assert body["input"][2]["action"] == {"type": "type", "text": "hi"} and body["input"][3]["call_id"] == "call_0_0"
    assert body["input"][4]["content"] == [{"type": "input_text", "text": "Step 1. Feedback: typed"}]
    from guiforge.harness.formats import ModelReply, ToolCall

    calls = [ToolCall(c["name"], c["arguments"], c["id"]) for c in completion.tool_calls]
    thought, action = codec.parse(ModelReply(completion.text, calls, completion.reasoning), "web", None, coords)
    assert (thought, action) == ("The Send button.", Action(type="click", x=500, y=500))
    refused = [*messages[:3], Message("assistant", "", ({"id": "c", "name": "computer", "result": "Not done. No.",
                                                         "arguments": {"action": {"type": "move", "x": 1, "y": 1}}},)),
               Message("user", "Your reply could not be used: no. Reply with exactly one action.")]
    items = input_items(refused, ImageSizing())
    assert items[-2]["type"] == "computer_call_output" and items[-2]["output"]["image_url"].endswith(
        base64.b64encode(shot).decode())  # the screen did not change: the last screenshot
    assert items[-1]["content"][0]["text"] == "Not done. No."
