"""ToolsEnv through the EnvManager: acquire, reset, step (tool calls), evaluate, release."""

from __future__ import annotations

import base64
import io
import json

import pytest
from openpyxl import Workbook
from PIL import Image
from tools_helpers import make_world, text_image

from guiforge.envs import (
    Action,
    Criterion,
    EnvFailure,
    EnvManager,
    EnvSpec,
    TaskSpec,
    default_factories,
)
from guiforge.envs.tools import REGISTRY, ToolsEnv

SPEC = EnvSpec(domain="tools")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _xlsx() -> bytes:
    wb = Workbook()
    ws = wb.active
    ws.title = "Sales"
    for row in [["region", "amount"], ["North", 120.5], ["South", 80], ["North", 310]]:
        ws.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _png() -> bytes:
    buf = io.BytesIO()
    text_image(["Reference REF-7731"], size=(700, 140)).save(buf, format="PNG")
    return buf.getvalue()


def _task(**setup_overrides) -> TaskSpec:
    world = make_world(facts=[{"key": "fx_EUR_USD", "value": 1.1, "kind": "number"}])
    setup = {
        "world": world.model_dump(mode="json"),
        "files": {"sales.xlsx": {"base64": _b64(_xlsx())}, "scan.png": {"base64": _b64(_png())},
                  "readme.txt": "Sales are in EUR.\n"},
    } | setup_overrides
    return TaskSpec(
        task_id="tools-north-usd", domain="tools",
        instruction="Total the North region's sales in sales.xlsx, save the per-region totals to "
                    "totals.csv, and answer with the North total in USD.",
        setup=setup,
        rubric=[
            Criterion(id="answer", check={"fn": "answer_matches", "value": 473.55, "mode": "number",
                                          "tolerance": 0.01}),
            Criterion(id="totals_file", check={"fn": "file_contains", "path": "totals.csv",
                                               "text": "North,430.5"}),
            Criterion(id="grouped", required=False, weight=0.5,
                      check={"fn": "state_contains", "path": "tools.calls[*].name", "text": "group_sum"}),
        ],
    )


def call(name: str, **arguments) -> Action:
    return Action(type="call_tool", text=json.dumps({"name": name, "arguments": arguments}))


@pytest.fixture(scope="module")
def manager():
    with EnvManager(default_factories(), max_instances=1) as m:
        yield m


def test_full_episode_scores_through_the_rubric(manager: EnvManager):
    lease = manager.acquire(SPEC)
    try:
        obs = lease.reset(_task())
        assert obs.text.startswith("Task: Total the North region's sales")
        assert "- group_sum: Group rows by one column" in obs.text
        assert "Workspace files: readme.txt, sales.xlsx, scan.png" in obs.text
        assert obs.screenshot is None

        found = lease.step(call("search_tool", query="total per group", k=3))
        assert found.error is None and "group_sum" in [t["name"] for t in json.loads(found.feedback)]

        groups = lease.step(call("group_sum", path="sales.xlsx", by="region", column="amount",
                                 output="totals.csv"))
        assert groups.error is None
        north = next(g for g in json.loads(groups.feedback) if g["key"] == "North")
        assert north == {"key": "North", "sum": 430.5, "count": 2}
        assert groups.observation.feedback == groups.feedback

        usd = lease.step(Action(type="call_tool", text=json.dumps(
            {"name": "convert_currency",  # OpenAI-style arguments: a JSON string
             "arguments": json.dumps({"amount": 430.5, "from_currency": "EUR", "to_currency": "USD"})})))
        converted = json.loads(usd.feedback)
        assert converted["converted"] == 473.55 and converted["source"] == "world"

        crop = lease.step(call("crop_image", image="scan.png", left=0, top=0, right=500, bottom=120))
        assert crop.error is None
        shot = crop.observation
        assert shot.screenshot is not None and (shot.width, shot.height) == (500, 120)
        with Image.open(io.BytesIO(shot.screenshot)) as img:
            assert img.format == "PNG" and img.size == (500, 120)
        after = lease.step(call("word_count", path="readme.txt"))
        assert after.observation.screenshot is None  # only the call that made an image shows one

        done = lease.step(Action(type="answer", answer="North total: 473.55 USD"))
        assert done.done and done.answer == "North total: 473.55 USD" and done.status == "success"
        assert lease.step(call("today")).error.startswith("the episode has ended")

        verdict = lease.evaluate()
        assert verdict.success and verdict.score == 1.0, verdict
        state = lease.env.final_state()
        names = [c["name"] for c in state.apps["tools"]["calls"]]
        assert names == ["search_tool", "group_sum", "convert_currency", "crop_image", "word_count"]
        assert state.apps["tools"]["images"] == {"img-1": {"width": 500, "height": 120, "mode": "RGB"}}

        # a second episode on the same (reused) instance starts clean and can fail
        obs = lease.reset(_task())
        assert obs.text.endswith("Workspace files: readme.txt, sales.xlsx, scan.png")
        assert lease.env.final_state().apps["tools"]["calls"] == []
        lease.step(Action(type="answer", answer="430.5"))
        verdict = lease.evaluate()
        assert not verdict.success and verdict.criteria == {"answer": 0, "totals_file": 0, "grouped": 0}
    finally:
        lease.release()


def test_agent_mistakes_are_step_errors_not_env_failures(manager: EnvManager):
    with manager.acquire(SPEC) as lease:
        lease.reset(_task())
        bad_args = lease.step(call("group_sum", path="sales.xlsx", by="region"))
        assert bad_args.error.startswith("invalid arguments for group_sum: missing required parameter 'column'")
        assert json.loads(bad_args.feedback) == {"error": bad_args.error}
        missing = lease.step(call("read_table", path="nope.xlsx"))
        assert "no file 'nope.xlsx'" in missing.error
        unknown = lease.step(call("sum_column", path="sales.xlsx"))
        assert "no tool 'sum_column'" in unknown.error and "similar:" in unknown.error
        not_json = lease.step(Action(type="call_tool", text="group_sum(sales.xlsx)"))
        assert "must be JSON" in not_json.error
        wrong_domain = lease.step(Action(type="click", x=10, y=10))
        assert "not in the tools action set" in wrong_domain.error
        calls = lease.env.final_state().apps["tools"]["calls"]
        assert len(calls) == 5 and not any(c["ok"] for c in calls)
        rows = [[f"row-{i}", "x" * 40] for i in range(1000)]
        big = lease.step(call("write_csv", path="big.csv", columns=["id", "text"], rows=rows))
        assert big.error is None
        page = json.loads(lease.step(call("read_table", path="big.csv", limit=1000)).feedback)
        assert page["truncated"] is True and page["chars"] > 40_000 and "narrow" in page["hint"]
        assert lease.step(call("today")).feedback == '{"date": "2025-03-12", "weekday": "wednesday"}'


def test_tool_subset_and_bad_setup(manager: EnvManager):
    with manager.acquire(SPEC) as lease:
        obs = lease.reset(_task(tools=["read_table", "convert_currency"]))
        listed = [line[2:].split(":")[0] for line in obs.text.splitlines() if line.startswith("- ")]
        assert listed == ["search_tool", "read_table", "convert_currency"]
        assert "no tool 'group_sum' in this task" in lease.step(call("group_sum", path="x", by="a", column="b")).error
        assert lease.env.schemas()[1] == REGISTRY["read_table"].schema()
    with manager.acquire(SPEC) as lease, pytest.raises(EnvFailure, match="setup.tools names unknown tools"):
        lease.reset(_task(tools=["teleport"]))
    with manager.acquire(SPEC) as lease, pytest.raises(EnvFailure, match="points outside the workspace"):
        lease.reset(_task(files={"../escape.txt": "x"}))


def test_terminate_and_no_world():
    env = ToolsEnv(SPEC)
    env.start()
    try:
        env.reset(TaskSpec(task_id="t", domain="tools", instruction="Nothing to do."))
        assert "no world" in env.step(call("world_summary")).error
        end = env.step(Action(type="terminate", status="infeasible"))
        assert end.done and env.final_state().status == "infeasible" and env.final_state().answer is None
    finally:
        env.close()
    assert not env.healthy()
