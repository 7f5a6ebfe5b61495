"""The compile step: a plugin stage named in a pipeline file runs (local and Prefect) with
the table it declares; every name and column a pipeline relies on is checked before
anything runs, each failure one line naming the file, the field and its line."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pyarrow.dataset as ds
import pytest

from guiforge.errors import ConfigError
from guiforge.lake import Lake
from guiforge.orchestration.compile import load_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.paths import PROJECT_ROOT

GREET = """\
name: greet
seed: 3
workers: 2
models:
  world_builder: {provider: offline}
stages:
  personas: {count: 5, shard_size: 3}
  greet: {salutation: Hi}
  greet_again:
    uses: seamsdemo:GreetStage
"""


def write(tmp_path, text: str):
    path = tmp_path / "p.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_a_plugin_stage_runs_with_the_table_it_declares(tmp_path, demo):
    pipeline = load_pipeline(write(tmp_path, GREET), lake=str(tmp_path / "lake"))
    assert [s.name for s in pipeline.stages] == ["personas", "greet", "greet_again"]
    run_pipeline(pipeline, executor="local")
    lake = Lake(tmp_path / "lake")
    rows = lake.read_table("greetings").to_pylist()
    assert len(rows) == 10 and all(r["text"].startswith(("Hi, ", "Hello, ")) for r in rows)
    assert lake.read_table("greetings").schema.field("text").type == "string"


@pytest.mark.slow
def test_the_prefect_path_resolves_plugins_in_its_flows(tmp_path, demo):
    path = write(tmp_path, GREET)
    done = subprocess.run([sys.executable, "-m", "guiforge.cli", "run", str(path), "--lake", str(tmp_path / "lake")],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, env=dict(os.environ))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # read as any Parquet reader would (this process never compiled the pipeline)
    assert ds.dataset(tmp_path / "lake" / "greetings", format="parquet").count_rows() == 10


BAD = {
    "misspelt kind": ("  greet: {}\n  gret_more: {uses: gret}\n", ":9: stages.gret_more.uses: ",
                      "unknown stage kind 'gret'; installed: "),
    "missing module": ("  greet:\n    uses: seamsdmo.stages:GreetStage\n", ":9: stages.greet.uses: ",
                       "no module named 'seamsdmo'"),
    "wrong type": ("  greet: {uses: 'seamsdemo:shouts'}\n", ":8: stages.greet.uses: ",
                   "is the function 'shouts', not a Stage subclass"),
    "no such column": ("  misses_column: {}\n", ":8: stages.misses_column: ",
                       "reads personas.nickname, but the personas table has no column 'nickname'"),
    "no schema": ("  no_schema: {}\n", ":8: stages.no_schema: ", "writes table 'salutations', which has no schema"),
    "export format": ("  greet: {}\n  export:\n    formats:\n      - hf\n      - parquet2\n",
                      ":12: stages.export.formats.1: ", "unknown export format 'parquet2'; installed: hf, llamafactory, trl"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_validate_names_file_line_and_field(tmp_path, demo, case):
    stages, where, what = BAD[case]
    text = GREET.split("  greet: {salutation: Hi}")[0] + stages
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_pipeline(path)
    message = str(err.value)
    assert message.startswith(str(path) + where), message
    assert what in message and "\n" not in message, message


def test_a_column_the_export_reads_must_be_written_by_its_producer(tmp_path, demo):
    path = write(tmp_path, """\
        name: partial
        stages:
          partial_trajectories: {}
          export: {reads: [trajectories, steps, images, tasks, worlds]}
        """)
    with pytest.raises(ConfigError) as err:
        load_pipeline(path)
    assert str(err.value).startswith(f"{path}:4: stages.export: reads trajectories.harness_json, which stage "
                                     "'partial_trajectories' (kind 'partial_trajectories') does not write"), err.value


@pytest.mark.parametrize("field, value, where, what", [
    ("provider", "'json:dumps'", "models.teacher.provider", "model provider 'json:dumps' is the function 'dumps'"),
    ("provider", "gemini", "models.teacher.provider", "unknown model provider 'gemini'"),
    ("action_format", "uitar", "models.teacher.action_format", "unknown action format 'uitar'"),
    ("action_format", "'guiforge.stages.base:Stage'", "models.teacher.action_format",
     "is the class guiforge.stages.base.Stage, not an ActionFormat subclass"),
])
def test_model_plugins_are_checked(tmp_path, field, value, where, what):
    path = write(tmp_path, f"""\
        name: models
        models:
          teacher: {{{field}: {value}}}
        stages:
          personas: {{count: 2}}
        """)
    with pytest.raises(ConfigError) as err:
        load_pipeline(path)
    assert str(err.value).startswith(f"{path}:3: {where}: "), err.value
    assert what in str(err.value)


@pytest.mark.parametrize("candidates, judge, line, where, what", [
    ("{domains: [web, desktp]}", "{}", 6, "stages.task_candidates.domains.1",
     "unknown environment kind 'desktp'; installed: desktop, mobile, tools, web"),
    ("{}", "{accept: strict}", 9, "stages.judge.accept", "unknown acceptance policy 'strict'; installed: both, judge"),
])
def test_stage_config_plugins_are_checked(tmp_path, candidates, judge, line, where, what):
    path = write(tmp_path, f"""\
        name: kinds
        stages:
          personas: {{count: 2}}
          worlds: {{}}
          skills: {{}}
          task_candidates: {candidates}
          task_gates: {{package_gate: false}}
          rollouts: {{}}
          judge: {judge}
        """)
    with pytest.raises(ConfigError) as err:
        load_pipeline(path)
    assert str(err.value).startswith(f"{path}:{line}: {where}: "), err.value
    assert what in str(err.value), err.value


def test_the_config_module_imports_no_engine_code():
    code = ("import sys, guiforge.config; print(sorted(m for m in sys.modules if m.startswith(('guiforge.stages', "
            "'guiforge.curation', 'guiforge.harness', 'guiforge.orchestration'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "[]"
