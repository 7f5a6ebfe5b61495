"""Pipeline files are validated before anything runs; bad input gets one line naming the
file, the line and the field, never a traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from guiforge.errors import ConfigError
from guiforge.orchestration.compile import build_pipeline, load_pipeline
from guiforge.paths import DEFAULT_PIPELINE, PROJECT_ROOT


def write(tmp_path, text: str):
    path = tmp_path / "pipeline.yaml"
    path.write_text(textwrap.dedent(text))
    return path


BAD = {
    "negative count": ("name: x\nstages:\n  personas:\n    count: -3\n", ":4: stages.personas.count: ", "greater than or equal to 0"),
    "unknown key": ("name: x\nstages:\n  personas:\n    count: 3\n    colour: red\n", ":5: stages.personas.colour: ", "unknown key"),
    "unknown top key": ("name: x\nlaek: /tmp\nstages:\n  personas: {}\n", ":2: laek: ", "unknown key"),
    "wrong type": ("name: x\nseed: abc\nstages:\n  personas: {}\n", ":2: seed: ", "valid integer"),
    "no producer": ("name: x\nstages:\n  worlds: {}\n", ":3: stages.worlds: ", "no stage in this pipeline produces it"),
    "unknown stage": ("name: x\nstages:\n  teleport: {}\n", ":3: stages.teleport: ", "unknown stage kind"),
    "unknown role": ("name: x\nmodels:\n  oracle: {provider: offline}\nstages:\n  personas: {}\n", ":3: models.oracle: ", "unknown role"),
    "bad provider": ("name: x\nmodels:\n  world_builder: {provider: gemini}\nstages:\n  personas: {}\n", ":3: models.world_builder.provider: ", "unknown model provider 'gemini'; use auto, offline or an installed provider: anthropic, openai"),
    "no stages": ("name: x\nstages: {}\n", ":2: stages: ", "at least 1 item"),
    "missing name": ("stages:\n  personas: {}\n", ":1: name: ", "required key is missing"),
    "duplicate key": ("name: x\nstages:\n  personas: {}\n  personas: {}\n", ":4: stages.personas: ", "duplicate key"),
    "bad yaml": ("name: x\nstages:\n  personas:\n    count: [3\n", ":5: ", "invalid YAML"),
    "not a mapping": ("- just\n- a list\n", ": ", "must be a YAML mapping"),
    "zero workers": ("name: x\nworkers: 0\nstages:\n  personas: {}\n", ":2: workers: ", "greater than or equal to 1"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_configs_name_file_line_and_field(tmp_path, case):
    text, where, what = BAD[case]
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_pipeline(path)
    message = str(err.value)
    assert message.startswith(str(path) + where), message
    assert what in message
    assert "\n" not in message


def test_cli_prints_one_line_and_exits_2(tmp_path):
    path = write(tmp_path, "name: x\nstages:\n  personas:\n    count: -1\n")
    proc = subprocess.run([sys.executable, "-m", "guiforge.cli", "validate", str(path)],
                          capture_output=True, text=True, cwd=PROJECT_ROOT)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert lines[0] == f"error: {path}:4: stages.personas.count: Input should be greater than or equal to 0 (got -1)"


def test_default_pipeline_is_valid_and_ordered():
    pipeline = load_pipeline(None)
    assert pipeline.source == str(DEFAULT_PIPELINE)
    names = [s.name for s in pipeline.stages]
    assert names.index("personas") < names.index("worlds")
    assert pipeline.config.lake == "data/lake"


def test_run_id_derives_from_config_not_from_lake():
    data = {"name": "demo", "seed": 1, "stages": {"personas": {"count": 5}}}
    a = build_pipeline(data, "a.yaml", lake="/tmp/one")
    b = build_pipeline(data, "b.yaml", lake="memory://two")
    c = build_pipeline({**data, "seed": 2}, "c.yaml")
    assert a.run_id == b.run_id and a.run_id.startswith("demo-")
    assert c.run_id != a.run_id
    assert build_pipeline(data, "d.yaml", run_id="mine").run_id == "mine"


def test_stage_order_follows_tables_not_file_order():
    data = {"name": "demo", "stages": {"worlds": {}, "personas": {"count": 2}}}
    assert [s.name for s in build_pipeline(data, "x.yaml").stages] == ["personas", "worlds"]


def test_stage_kind_can_be_reused_under_another_name():
    data = {"name": "demo", "stages": {"people": {"uses": "personas", "count": 2}, "worlds": {}}}
    pipeline = build_pipeline(data, "x.yaml")
    assert pipeline.producers()["personas"] == ["people"]


def test_shipped_pipeline_variants_are_valid(monkeypatch):
    from guiforge.paths import DATA_DIR

    for key in ("VLLM_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):  # the model-family examples
        monkeypatch.setenv(key, "x")
    variants = sorted((DATA_DIR / "pipelines").glob("*.yaml"))
    assert variants
    for path in variants:
        assert load_pipeline(path).stages
