"""A hostile user's battery, through the CLI as a subprocess: malformed pipeline files, skill
cards, scenarios, imported task JSON and lake states. Each is refused with exit 2 (or the
documented code) and one line that names the file, and the line and field where there is
one; never a traceback, never a run that goes on. Escapes through the data (Python tags,
Jinja, ``../``, HTML/JS, shell metacharacters) execute nothing and write nothing outside the
lake and workspace (tests/test_hostile_escapes.py)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.paths import DATA_DIR, PROJECT_ROOT, SKILLS_DIR

BASE = ("name: hostile\nseed: 1\nmodels:\n  world_builder: {provider: offline}\n"
        "stages:\n  personas: {count: 2}\n  worlds: {}\n")
BOMB = ('a: &a ["x","x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n'
        "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
        "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
        "g: [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n")
MERGE_BOMB = ("a: &a {k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, k5: 5, k6: 6, k7: 7, k8: 8, k9: 9}\n"
              + "".join(f"l{i}: &l{i} [{', '.join(['*a' if i == 0 else f'*l{i - 1}'] * 12)}]\n" for i in range(6)))
MARKER = "/tmp/guiforge-hostile-marker"


@dataclass
class Case:
    """One hostile input: what to write, how to feed it, what the one line must say."""

    id: str
    kind: str  # pipeline | card | scenario | task | lake
    text: str | bytes | None = None
    size: int | None = None  # a sparse file of this many bytes instead of ``text``
    line: int | None = None
    field: str | None = None
    words: tuple[str, ...] = ()
    code: int = 2
    args: tuple[str, ...] = ()
    extra: dict = dataclasses.field(default_factory=dict)


def card(body: str = "", drop: str | None = None, name: str = "x") -> str:
    """The phone_info card as ``contacts.<name>``, with ``body`` appended and a key dropped."""
    text = (SKILLS_DIR / "contacts" / "phone_info.yaml").read_text().replace("id: contacts.phone_info",
                                                                             f"id: contacts.{name}")
    if drop:
        data = yaml.safe_load(text)
        data.pop(drop)
        text = yaml.safe_dump(data, sort_keys=False)
    return text + body


def line_of(text: str, needle: str) -> int:
    """The 1-based line of ``needle`` in ``text`` (cards change; the expected line follows)."""
    return text[:text.index(needle)].count("\n") + 1


def scenario(old: str = "", new: str = "", body: str = "") -> str:
    text = (DATA_DIR / "scenarios" / "conference_trip.yaml").read_text().replace("id: conference_trip", "id: zz_hostile")
    assert not old or old in text
    return text.replace(old, new, 1) + body


def task(**fields) -> str:
    base = {"format": "guiforge.task/1", "task_id": "t1", "domain": "web", "instruction": "Open the inbox.",
            "apps": ["mail"], "max_steps": 5}
    return json.dumps({**base, **fields}, indent=1)


CASES = [
    # -- pipeline files: syntax and bounds -------------------------------------------------------
    Case("alias-bomb", "pipeline", BASE + BOMB, line=12, words=("aliases expand to more than",)),
    Case("merge-key-bomb", "pipeline", BASE + MERGE_BOMB, words=("aliases expand to more than",)),
    Case("80-MB-file", "pipeline", size=80 << 20, words=("bytes is more than the 1,048,576",)),
    Case("2-MB-scalar", "pipeline", BASE + "description: '" + "x" * (2 << 20) + "'\n", words=("bytes is more than",)),
    Case("recursive-alias", "pipeline", BASE + "loop: &loop [1, *loop]\n", line=8, words=("refers to the value",)),
    Case("deep-nesting", "pipeline", BASE + "deep: " + "[" * 500 + "]" * 500 + "\n", words=("nested more than",)),
    Case("duplicate-key", "pipeline", BASE + "seed: 2\n", line=8, field="seed", words=("duplicate key",)),
    Case("unclosed-bracket", "pipeline", "name: x\nstages: {personas: {count: 2}\n", words=("invalid YAML",)),
    Case("tab-indent", "pipeline", "name: x\nstages:\n\tpersonas: {}\n", line=3, words=("invalid YAML",)),
    Case("binary", "pipeline", b"\x89PNG\r\n\x1a\n\x00\xff\xfe binary", words=("not a UTF-8 text file",)),
    Case("nul-byte", "pipeline", BASE + "description: a\x00b\n", line=8, words=("invalid YAML", "#x0000")),
    Case("empty-file", "pipeline", "", words=("must be a YAML mapping",)),
    Case("top-level-list", "pipeline", "- name: x\n- stages: {}\n", words=("must be a YAML mapping",)),
    Case("two-documents", "pipeline", BASE + "---\nname: other\n", words=("invalid YAML",)),
    Case("python-tag", "pipeline", BASE + f"x: !!python/object/apply:os.system ['touch {MARKER}']\n", line=8,
         words=("invalid YAML",)),
    Case("unknown-top-key", "pipeline", BASE + "stagez: {}\n", line=8, field="stagez", words=("unknown key",)),
    Case("name-with-path", "pipeline", BASE.replace("name: hostile", "name: ../../evil"), line=1, field="name"),
    Case("run-id-with-path", "pipeline", BASE + "run_id: ../../../tmp/evil\n", line=8, field="run_id"),
    Case("negative-seed", "pipeline", BASE.replace("seed: 1", "seed: -1"), line=2, field="seed"),
    Case("huge-seed", "pipeline", BASE.replace("seed: 1", "seed: 1e400"), line=2, field="seed"),
    Case("zero-workers", "pipeline", BASE + "workers: 0\n", line=8, field="workers"),
    Case("too-many-workers", "pipeline", BASE + "workers: 100000\n", line=8, field="workers"),
    Case("lake-not-a-string", "pipeline", BASE + "lake: [1, 2]\n", line=8, field="lake"),
    Case("description-mapping", "pipeline", BASE + "description: {a: 1}\n", line=8, field="description"),
    Case("missing-name", "pipeline", BASE.replace("name: hostile\n", ""), field="name", words=("required",)),
    Case("stages-empty", "pipeline", "name: x\nstages: {}\n", line=2, field="stages"),
    Case("stages-a-list", "pipeline", "name: x\nstages: [personas, worlds]\n", line=2, field="stages"),
    Case("unknown-stage-kind", "pipeline", BASE + "  teleport: {}\n", line=8, field="stages.teleport",
         words=("unknown stage kind",)),
    Case("uses-unknown", "pipeline", BASE + "  more: {uses: ../../../etc/passwd}\n", line=8, field="stages.more.uses"),
    Case("stage-name-case", "pipeline", BASE + "  Personas2: {uses: personas}\n", line=8, field="stages.Personas2"),
    Case("stage-config-type", "pipeline", BASE.replace("{count: 2}", "{count: many}"), line=6,
         field="stages.personas.count"),
    Case("stage-config-typo", "pipeline", BASE.replace("{count: 2}", "{cuont: 2}"), line=6,
         field="stages.personas.cuont", words=("unknown key",)),
    Case("unknown-role", "pipeline", BASE.replace("  world_builder:", "  wizard:"), line=4, field="models.wizard",
         words=("unknown role",)),
    Case("unknown-provider", "pipeline", BASE.replace("{provider: offline}", "{provider: magic}"), line=4,
         field="models.world_builder.provider"),
    Case("unknown-scenario", "pipeline", BASE.replace("worlds: {}", "worlds: {scenarios: [../../etc]}"), line=7,
         field="stages.worlds.scenarios", words=("unknown scenario",)),
    Case("folder-not-file", "pipeline", extra={"folder": True}, words=("is a folder",)),
    Case("missing-file", "pipeline", extra={"missing": True}, words=("no such file",)),
    # -- skill cards -----------------------------------------------------------------------------
    Case("card-alias-bomb", "card", card(BOMB.replace("a:", "za:", 1).replace("\nb:", "\nzb:")),
         words=("aliases expand",)),
    Case("card-2-MB", "card", card("# " + "x" * (2 << 20) + "\n"), words=("bytes is more than",)),
    Case("card-recursive-alias", "card", card("tags: &t [a, *t]\n"), words=("refers to the value",)),
    Case("card-jinja-syntax", "card", card().replace("What's {{ person.name }}'s", "What's {{ person.name '"),
         line=12, field="instructions.0", words=("Jinja syntax error",)),
    Case("card-unknown-check", "card", card().replace("fn: answer_mentions", "fn: os_system"),
         line=line_of(card(), "fn: answer_mentions"),
         field="rubric.0.check.fn", words=("unknown check",)),
    Case("card-id-mismatch", "card", card(name="y"), line=1, field="id"),
    Case("card-duplicate-key", "card", card("difficulty: hard\n"), field="difficulty", words=("duplicate key",)),
    Case("card-binary", "card", b"\xff\xfe\x00binary card", words=("not a UTF-8 text file",)),
    Case("card-missing-instructions", "card", card(drop="instructions"), field="instructions",
         words=("required",)),
    Case("card-top-level-list", "card", "- id: contacts.x\n", words=("must be a YAML mapping",)),
    Case("card-unknown-domain", "card", card().replace("domains: [web, mobile]", "domains: [spaceship]"), line=2,
         field="domains.0"),
    Case("card-param-expression", "card", card().replace('each: "world.contacts"', 'each: "world.contacts[["'),
         line=10, field="params.person.each", words=("Jinja syntax error",)),
    Case("card-negative-steps", "card", card().replace("max_steps: 6", "max_steps: -1"), line=6, field="max_steps"),
    Case("card-python-tag", "card", card(f"extra: !!python/object/apply:os.system ['touch {MARKER}']\n"),
         words=("invalid YAML",)),
    # -- scenarios -------------------------------------------------------------------------------
    Case("scenario-alias-bomb", "scenario", scenario(body=BOMB.replace("a:", "za:", 1)), words=("aliases expand",)),
    Case("scenario-2-MB", "scenario", scenario(body="# " + "x" * (2 << 20) + "\n"), words=("bytes is more than",)),
    Case("scenario-invalid-yaml", "scenario", scenario("title: \"Speaking at", "title: [\"Speaking at"),
         words=("invalid YAML",)),
    Case("scenario-a-list", "scenario", "- id: zz_hostile\n", words=("must be a mapping",)),
    Case("scenario-unknown-field", "scenario", scenario(body="colour: red\n"), field="colour",
         words=("unknown field",)),
    Case("scenario-duplicate-key", "scenario", scenario(body="title: again\n"), field="title",
         words=("duplicate key",)),
    Case("scenario-binary", "scenario", b"\xff\xfe\x00binary scenario", words=("not a UTF-8 text file",)),
    Case("scenario-recursive-alias", "scenario", scenario(body="tags: &t [a, *t]\n"), words=("refers to the value",)),
    Case("scenario-bad-id", "scenario", scenario().replace("id: zz_hostile", "id: ../../zz"), line=1, field="id"),
    Case("scenario-jinja", "scenario", scenario('title: "Speaking at {{ conf.name }}',
                                                'title: "Speaking at {{ conf.name '), line=2, field="title"),
    # -- imported task JSON ----------------------------------------------------------------------
    Case("task-invalid-json", "task", '{\n "task_id": "t1",\n "domain": \n}', line=4, words=("invalid JSON",)),
    Case("task-empty", "task", "", line=1, words=("invalid JSON",)),
    Case("task-a-list", "task", "[1, 2]", words=("a task is a JSON object",)),
    Case("task-missing-instruction", "task", task(instruction=None), field="instruction"),
    Case("task-wrong-format", "task", task(format="other/9"), field="format"),
    Case("task-unknown-domain", "task", task(domain="spaceship"), field="domain"),
    Case("task-apps-not-a-list", "task", task(apps=5), words=("apps",)),
    Case("task-steps-not-a-number", "task", task(max_steps="many"), words=("max_steps",)),
    Case("task-deep-nesting", "task", "[" * 100_000 + "]" * 100_000, words=("nested too deeply",)),
    Case("task-20-MB", "task", size=20 << 20, words=("bytes is more than",)),
    Case("task-binary", "task", b"\xff\xfe\x00{}", words=("not a UTF-8 text file",)),
    Case("task-evaluator-a-string", "task", json.dumps({"id": "o1", "instruction": "x", "evaluator": "boom"}),
         words=("wrong shape",)),
    Case("task-foreign-evaluator", "task", json.dumps({"id": "o1", "instruction": "x",
                                                       "evaluator": {"func": "compare_table"}}),
         field="evaluator.func"),
    Case("task-run-id-escape", "task", task(), args=("--run-id", "../../../../../tmp/guiforge-escape"),
         words=("--run-id:", "not valid"), extra={"names": "--run-id"}),
    # -- lake states (a small real lake, damaged one way each) -----------------------------------
    Case("lake-missing", "lake", args=("lake", "check"), extra={"lake": "missing"}, words=("no such lake",)),
    Case("lake-gc-missing", "lake", args=("lake", "gc"), extra={"lake": "missing"}, words=("no such lake",)),
    Case("lake-is-a-file", "lake", args=("lake", "check"), extra={"lake": "file"}, words=("not a guiforge lake",)),
    Case("lake-truncated-manifest", "lake", args=("run",), extra={"damage": "truncate"},
         words=("unreadable", "invalid JSON", "lake check")),
    Case("lake-manifest-a-list", "lake", args=("run",), extra={"damage": "list"}, words=("not a manifest entry",)),
    Case("lake-manifest-outputs-string", "lake", args=("run",), extra={"damage": "outputs"},
         words=("not a manifest entry",)),
    Case("lake-manifest-path-escape", "lake", args=("run",), extra={"damage": "path-escape"},
         words=("lies outside the lake",)),
    Case("lake-gc-path-escape", "lake", args=("lake", "gc"), extra={"damage": "path-escape"},
         words=("lies outside the lake", "nothing was deleted")),
    Case("lake-corrupt-shard", "lake", args=("run",), extra={"damage": "flip"}, words=("content differs",)),
    Case("lake-missing-shard", "lake", args=("run",), extra={"damage": "delete"}, words=("missing file",)),
    Case("lake-rows-edited", "lake", args=("run",), extra={"damage": "rows"}, words=("row count differs",)),
    Case("lake-gc-duplicate-reference", "lake", args=("lake", "gc"), extra={"damage": "duplicate"},
         words=("named by 2 manifest entries", "nothing was deleted")),
    Case("lake-gc-truncated-manifest", "lake", args=("lake", "gc"), extra={"damage": "truncate"},
         words=("nothing was deleted",)),
    Case("lake-manifest-binary", "lake", args=("run",), extra={"damage": "binary"}, words=("not UTF-8",)),
]


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "guiforge.cli", *args], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


def write(path: Path, case: Case) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if case.size is not None:
        with path.open("wb") as fh:
            fh.truncate(case.size)  # sparse: its size is what is refused, nothing is read
    elif isinstance(case.text, bytes):
        path.write_bytes(case.text)
    else:
        path.write_text(case.text or "")
    return path


@pytest.fixture(scope="module")
def small_lake(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("small") / "lake"
    config = yaml.safe_load(BASE)
    run_pipeline(build_pipeline(config, "t.yaml", lake=str(root), run_id="r"), executor="local")
    return root


def damage(lake: Path, how: str) -> Path:
    """Damage one committed shard or manifest of ``lake``; returns the file named."""
    manifest = sorted((lake / "_manifest" / "run=r" / "personas").glob("*.json"))[0]
    entry = json.loads(manifest.read_text())
    shard = lake / entry["outputs"]["personas"]["path"]
    if how == "truncate":
        manifest.write_text(manifest.read_text()[:30])
    elif how == "list":
        manifest.write_text("[1, 2, 3]")
    elif how == "binary":
        manifest.write_bytes(b"\xff\xfe\x00")
    elif how == "outputs":
        manifest.write_text(json.dumps({**entry, "outputs": "everything"}))
    elif how == "path-escape":
        entry["outputs"]["personas"]["path"] = "../../../../../../etc/passwd"
        manifest.write_text(json.dumps(entry))
        return manifest
    elif how in ("flip", "delete", "rows", "duplicate"):
        if how == "flip":
            data = bytearray(shard.read_bytes())
            data[len(data) // 2] ^= 0xFF
            shard.write_bytes(bytes(data))
        elif how == "delete":
            shard.unlink()
        elif how == "rows":
            entry["outputs"]["personas"]["rows"] += 3
            manifest.write_text(json.dumps(entry))
        else:  # a worlds entry edited to name the personas shard's file
            other = sorted((lake / "_manifest" / "run=r" / "worlds").glob("*.json"))[0]
            body = json.loads(other.read_text())
            body["outputs"]["worlds"]["path"] = entry["outputs"]["personas"]["path"]
            other.write_text(json.dumps(body))
            return shard
        return shard
    return manifest


def run_case(case: Case, tmp_path: Path, small_lake: Path) -> tuple[subprocess.CompletedProcess, Path]:
    lake = tmp_path / "lake"
    if case.kind == "pipeline":
        path = tmp_path / "hostile.yaml"
        if case.extra.get("folder"):
            path.mkdir()
        elif not case.extra.get("missing"):
            write(path, case)
        return cli("validate", str(path), "--lake", str(lake)), path
    if case.kind == "card":
        path = write(tmp_path / "cards" / "contacts" / "x.yaml", case)
        config = tmp_path / "p.yaml"
        config.write_text(BASE + f"  skills: {{dir: {tmp_path / 'cards'}}}\n")
        return cli("validate", str(config), "--lake", str(lake)), path
    if case.kind == "scenario":
        home = tmp_path / "home"
        shutil.copytree(DATA_DIR, home / "data")
        (home / "skills").symlink_to(SKILLS_DIR)
        path = write(home / "data" / "scenarios" / "zz_hostile.yaml", case)
        config = tmp_path / "p.yaml"
        config.write_text(BASE)
        return cli("validate", str(config), "--lake", str(lake), env={"GUIFORGE_HOME": str(home)}), path
    if case.kind == "task":
        path = write(tmp_path / "task.json", case)
        return cli("tasks", "import", str(path), "--lake", str(lake), *case.args), path
    where = case.extra.get("lake")
    if where == "missing":
        path = tmp_path / "no-such-lake"
    elif where == "file":
        path = tmp_path / "a-file"
        path.write_text("not a lake")
    else:
        shutil.copytree(small_lake, lake)
        path = damage(lake, case.extra["damage"])
    target = path if where else lake
    if case.args == ("run",):
        config = tmp_path / "p.yaml"
        config.write_text(BASE)
        return cli("run", str(config), "--lake", str(target), "--run-id", "r", "--executor", "local"), path
    return cli(*case.args, "--lake", str(target)), path


# CI runs these (a few of each kind, each refused by a different guard); --battery runs all
CI_CASES = {"alias-bomb", "80-MB-file", "python-tag", "unknown-top-key", "run-id-with-path", "stage-config-typo",
            "unknown-scenario", "missing-file", "card-jinja-syntax", "card-unknown-check", "card-python-tag",
            "scenario-alias-bomb", "scenario-jinja", "task-invalid-json", "task-20-MB", "task-run-id-escape",
            "task-foreign-evaluator", "lake-truncated-manifest", "lake-manifest-path-escape", "lake-gc-path-escape",
            "lake-corrupt-shard"}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=() if c.id in CI_CASES else pytest.mark.battery)
                                  for c in CASES])
def test_hostile_input_is_refused_in_one_line(case, tmp_path, small_lake):
    if os.path.exists(MARKER):
        os.unlink(MARKER)
    done, path = run_case(case, tmp_path, small_lake)
    text = (done.stdout + done.stderr).strip()
    assert done.returncode == case.code, text[-2000:]
    assert "Traceback" not in text, text[-3000:]
    lines = [x for x in text.splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith("error")]
    # `run` prints its header before it reads the lake; every other command prints the one line only
    assert len(errors) == 1 and errors[0] == lines[-1] and (case.args == ("run",) or len(lines) == 1), text
    line = errors[0]
    named = case.extra.get("names") or (path.name if case.kind == "lake" and not case.extra.get("lake") else str(path))
    assert named in line, f"the line does not name {named}: {line}"
    if case.line:
        assert f"{path}:{case.line}:" in line, line
    if case.field:
        assert f"{case.field}:" in line or f"{case.field} " in line, line
    for word in case.words:
        assert word in line, line
    assert not os.path.exists(MARKER), "a hostile input executed a command"
    assert not Path("/tmp/guiforge-escape").exists(), "a write escaped the lake"


def test_the_battery_is_large_enough():
    assert {c.id for c in CASES} >= CI_CASES
    kinds = {k: sum(c.kind == k for c in CASES) for k in ("pipeline", "card", "scenario", "task", "lake")}
    assert sum(kinds.values()) >= 50 and min(kinds.values()) >= 8, kinds
