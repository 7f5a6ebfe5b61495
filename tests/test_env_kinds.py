"""Environment kinds own their facts; checks answer bools, numbers or (value, reason); a kind's
graded reward is scored in the verifier's isolated worker; tasks may carry their own setup
and no world; the compile step resolves a pipeline's kinds and check plugins and names the
line of a misspelt one; outside plugins enter shard fingerprints."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from htmlbench_package import installed

from guiforge.envs import EnvKind, EnvSpec, FinalState, RunKinds, TaskSpec, kind_of
from guiforge.envs.actions import ACTION_SETS, Action
from guiforge.envs.base import Environment
from guiforge.envs.kinds import is_touch
from guiforge.errors import ConfigError
from guiforge.harness.episode import system_prompt
from guiforge.orchestration.compile import load_pipeline
from guiforge.presentation import Looks
from guiforge.tasks.materialize import task_spec
from guiforge.verify.contract import Criterion
from guiforge.verify.runner import VerifierFailure, VerifierPool
from guiforge.verify.scoring import check_value, score_rubric
from guiforge.worlds.model import World

TINY = Path(__file__).resolve().parent.parent / "data" / "pipelines" / "tiny.yaml"


@pytest.fixture(scope="module")
def htmlbench():
    """The worked example installed with pip (an installed package's checks and kind)."""
    with installed():
        yield


def test_builtin_kinds_own_their_facts():
    assert kind_of("desktop").actions("terminal") == ACTION_SETS["desktop_terminal"]
    assert kind_of("desktop").actions(None) == ACTION_SETS["desktop_hybrid"]
    assert kind_of("mobile").touch and not kind_of("web").touch and is_touch("mobile") and not is_touch("tools")
    assert not kind_of("tools").points() and not kind_of("desktop").points("terminal") and kind_of("web").points()
    assert kind_of("desktop").spec("gui", {"viewport": [1280, 800], "theme": {"name": "x"}}).pool_key == \
        ("desktop", (1280, 800), "gui", None, None, "x")
    assert kind_of("desktop").spec("terminal", {"viewport": [1280, 800]}).viewport is None
    assert kind_of("mobile").spec(None, None, phone_screenshots="css").screenshot_scale == "css"
    assert kind_of("web").spec("gui").pool_key == ("web", None, None, None, None, None)
    with pytest.raises(ValueError, match="no environment kind for domain 'nope'"):
        kind_of("nope")


class CalcQuizKind(EnvKind):
    """A kind of this test's own: a new domain label, its own action set and surface."""

    domain = "quiz"
    surface = "a quiz with a single answer box"
    adapter = "guiforge.envs.tools:ToolsEnv"
    action_sets = {None: frozenset({"type", "answer", "terminate"})}
    capacity = 1


def test_a_new_kind_brings_its_action_set_and_prompt_surface(monkeypatch):
    import guiforge.envs.kinds as kinds

    kind = CalcQuizKind()
    monkeypatch.setattr(kinds, "resolve_kind", lambda ref: kind if ref == "quiz" else _builtin(ref))
    prompt = system_prompt("quiz")
    assert "a quiz with a single answer box" in prompt and "(quiz)" in prompt
    assert "Screen coordinates" not in prompt  # no action of this kind takes a point
    with pytest.raises(ValueError, match="not in the quiz action set"):
        Action(type="click", x=1, y=1).check_domain("quiz")
    assert RunKinds().capacity("quiz") == 1


def test_a_site_kinds_prompt_says_what_goto_opens_there_and_builtin_prompts_say_nothing_new(monkeypatch):
    import guiforge.envs.kinds as kinds
    from guiforge.envs.site_kind import SiteKind

    class Quiz(SiteKind):
        domain, surface = "quiz", "a quiz page"

    monkeypatch.setattr(kinds, "resolve_kind", lambda ref: Quiz() if ref == "quiz" else _builtin(ref))
    for codec in ("guiforge", "pyautogui"):
        prompt = system_prompt("quiz", action_format=codec)
        assert "a quiz page" in prompt and prompt.endswith(Quiz.notes), codec
    assert "On this site" not in system_prompt("web") and not kind_of("web").notes_for(None)


_builtin = __import__("guiforge.envs.kinds", fromlist=["resolve_kind"]).resolve_kind


def test_setup_without_a_world_is_the_tasks_own_and_unknown_keys_are_kept():
    task = {"task_id": "t1", "domain": "web", "apps": ["mail"], "instruction": "x",
            "setup_json": json.dumps({"apps": {"mail": {"inbox": []}}, "start": "mail", "bench_answer": 7}),
            "rubric_json": None}
    spec = task_spec(task, None)
    assert spec.setup == {"apps": {"mail": {"inbox": []}}, "start": "mail", "bench_answer": 7}
    assert spec.world_id is None and spec.rubric == []


def test_an_rl_row_without_a_world_carries_its_setup_and_one_missing_its_world_is_refused():
    from guiforge.rl.tasks import runtime_task

    task = {"task_id": "t3", "domain": "web", "apps": ["mail"], "instruction": "x", "variant": None,
            "setup_json": json.dumps({"start": "mail", "bench_answer": 7}), "rubric_json": None}
    spec, _ = runtime_task(json.dumps(task), None)
    assert spec.setup == {"start": "mail", "bench_answer": 7} and spec.world_id is None
    with pytest.raises(ValueError, match="no world_json"):
        runtime_task({**task, "world_id": "w1"}, None)


def test_setup_built_from_a_world_keeps_keys_the_builder_does_not_know():
    from guiforge.envs.web.sample_world import sample_world

    world = sample_world()
    assert isinstance(world, World)
    task = {"task_id": "t2", "domain": "web", "apps": ["mail"], "instruction": "x",
            "setup": {"start": "mail", "bench_answer": 7}, "rubric": []}
    setup = task_spec(task, world).setup
    assert setup["bench_answer"] == 7 and "mail" in setup["apps"] and setup["start"].startswith("/mail")


def test_a_check_answers_a_bool_a_number_or_value_and_reason():
    assert check_value(True) == (1, None) and check_value(0.25) == (0.25, None)
    assert check_value((0.5, "half")) == (0.5, "half") and check_value((False, "no")) == (0, "no")
    for bad in (1.5, -0.1, "yes", (0.5, 3)):
        with pytest.raises(ValueError):
            check_value(bad)


def test_graded_criteria_score_by_value_and_binary_rules_stay():
    checks = {"half": lambda state: (0.5, "half way"), "yes": lambda state: True, "no": lambda state: False,
              "wild": lambda state: 7}
    rubric = [Criterion(id="a", check={"fn": "half"}, required=False, weight=2),
              Criterion(id="b", check={"fn": "yes"})]
    result = score_rubric(rubric, FinalState(), find=checks.get)
    assert result.criteria == {"a": 0.5, "b": 1} and result.score == pytest.approx(2 / 3, abs=1e-6)
    assert result.success and result.reasons == {"a": "half way"}
    # a graded criterion that is required passes only at 1.0; a check answering nonsense fails it
    rubric = [Criterion(id="a", check={"fn": "half"}), Criterion(id="w", check={"fn": "wild"}, required=False)]
    result = score_rubric(rubric, FinalState(), find=checks.get)
    assert not result.success and result.criteria["w"] == 0 and "returned 7" in result.errors[0]
    # binary rubrics serialise as before: no reasons, no graded key
    plain = score_rubric([Criterion(id="b", check={"fn": "yes"})], FinalState(), find=checks.get)
    assert plain.as_dict() == {"score": 1.0, "success": True, "criteria": {"b": 1}, "errors": []}


def test_the_isolated_worker_loads_declared_checks_and_a_kinds_evaluate(htmlbench):
    """The worker runs `python -I`: a declared check from an installed module is found there,
    and a kind's evaluate() grades the state and takes precedence over the rubric's score."""
    rubric = [Criterion(id="form", check={"fn": "answer_close", "target": 10.0}, required=False)]
    task = TaskSpec(task_id="t", domain="htmlbench", instruction="x", setup={"answer": 10.0, "tolerance": 0.2})
    state = FinalState(apps={"site": {"page": {"submitted": "10.8"}}})
    pool = VerifierPool(checks=("guiforge_htmlbench.checks:answer_close",))
    try:
        result = pool.verify(rubric, state, evaluator="guiforge_htmlbench.kind:HtmlBenchKind", task=task)
        assert result.criteria == {"form": 0.6} and result.reasons["form"].startswith("answered 10.8")
        assert result.graded["value"] == 0.6 and result.score == 0.6 and not result.errors
        # a check module the worker cannot import: no verdict (a verifier_failure saying why),
        # never a score of 0 that would train as a failed episode
        broken = VerifierPool(checks=("no_such_pkg.checks:CHECKS",))
        try:
            with pytest.raises(VerifierFailure) as failed:
                broken.verify(rubric, state)
            assert "no module named 'no_such_pkg'" in str(failed.value) and "python -I" in str(failed.value)
        finally:
            broken.close()
    finally:
        pool.close()


def _pipeline(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(TINY.read_text() + textwrap.dedent(extra))
    return path


def test_validate_resolves_kinds_and_checks_and_names_the_line_of_a_misspelt_one(tmp_path, htmlbench):
    good = load_pipeline(_pipeline(tmp_path, """
        envs: {htmlbench: htmlbench, web: guiforge.envs.kinds_builtin:WEB}
        checks: [guiforge_htmlbench.checks:CHECKS]
        """))
    assert good.kinds().kind("htmlbench").domain == "htmlbench"
    with pytest.raises(ConfigError) as err:
        load_pipeline(_pipeline(tmp_path, """
            envs:
              web: guiforge.envs.kinds_builtin:WEBB
            """))
    text = str(err.value)
    assert "p.yaml:20" in text and "envs.web" in text and "has no 'WEBB'" in text and "\n" not in text
    with pytest.raises(ConfigError, match=r"p\.yaml:21: checks\.1: .*no module named 'guiforge_htmlbnech'"):
        load_pipeline(_pipeline(tmp_path, """
            checks:
              - guiforge_htmlbench.checks:CHECKS
              - guiforge_htmlbnech.checks:CHECKS
            """))
    with pytest.raises(ConfigError, match=r"envs\.web: environment kind 'mobile' serves domain 'mobile', not 'web'"):
        load_pipeline(_pipeline(tmp_path, "envs: {web: mobile}\n"))


def test_a_pipeline_that_declares_nothing_keeps_its_run_id():
    """envs: and checks: left out do not enter the run's fingerprint (the default run id holds)."""
    pipeline = load_pipeline(TINY)
    body = pipeline.config.model_dump(exclude={"lake", "run_id", "description", "max_failure_share", "faults",
                                               "envs", "checks"})
    assert "envs" not in body and pipeline.run_id.startswith("tiny-")
    assert pipeline.kinds().ref("web") == "web"


def test_envspec_takes_a_new_domain_label():
    assert EnvSpec(domain="htmlbench").pool_key[0] == "htmlbench"


def test_rl_select_bands_a_kinds_graded_rewards_and_leaves_binary_ones_alone():
    from guiforge.selection import NoVariance
    from guiforge.stages.rl_select import graded_rewards

    graded = [{"score": v, "success": True, "criteria_json": '{"graded": {"value": 0}}'} for v in (1.0, 0.6, 0.2)]
    row = {"n_valid": 3, "n_success": 3, **graded_rewards(graded)}
    assert row["success_rate"] == pytest.approx(0.6) and NoVariance().check(row) is None
    same = [{**g, "score": 0.5} for g in graded]
    assert "same reward" in NoVariance().check({"n_valid": 3, "n_success": 3, **graded_rewards(same)})
    binary = [{"score": 0.5, "success": True, "criteria_json": '{"criteria": {"graded": 1}}'}] * 3
    assert graded_rewards(binary) == {}


class GradedQuizKind(CalcQuizKind):
    """An outside kind with variants, its own health check and its own reward."""

    action_sets = {"easy": frozenset({"answer"}), "hard": frozenset({"type", "answer"})}

    def healthy(self, env) -> bool:
        return env.spec.theme != "sick"  # the kind knows what a dead instance looks like

    def evaluate(self, task, state):
        return 0.25, "a quarter"


class QuizAdapter(Environment):
    """An adapter registered on its own for the quiz domain (a remote pool of quiz instances)."""

    domain = "quiz"

    def start(self): ...
    def reset(self, task): ...
    def observe(self): ...
    def step(self, action): ...
    def final_state(self): return FinalState()
    def close(self): ...


def test_an_adapter_registered_alone_keeps_the_variants_health_check_and_reward_of_its_kind(monkeypatch):
    import guiforge.envs.kinds as kinds
    from guiforge.envs import EnvManager

    facts = GradedQuizKind()
    monkeypatch.setattr(kinds, "resolve_kind", lambda ref: facts if ref == "quiz" else _builtin(ref))
    kind = kinds.resolve_kind("test_env_kinds:QuizAdapter")
    assert isinstance(kind, kinds.AdapterKind) and isinstance(kind.make(EnvSpec(domain="quiz")), QuizAdapter)
    assert kind.variants() == ("easy", "hard") and kind.actions("hard") == frozenset({"type", "answer"})
    assert kind.evaluate(TaskSpec(task_id="t", domain="quiz", instruction="x"), FinalState()) == (0.25, "a quarter")
    # the verifier worker imports the wrapped kind (AdapterKind cannot be made without arguments)
    assert kind.graded and kind.evaluator() == "test_env_kinds:GradedQuizKind"
    assert not kind.healthy(QuizAdapter(EnvSpec(domain="quiz", theme="sick")))
    # the manager asks the kind, not the adapter, whether an instance is alive: a sick one is replaced
    manager = EnvManager(RunKinds({"quiz": "test_env_kinds:QuizAdapter"}), max_instances=1)
    try:
        for theme, replaced in (("well", 0), ("sick", 1)):
            with manager.acquire(EnvSpec(domain="quiz", theme=theme), timeout_s=30):
                pass
            assert manager.stats.replaced == replaced, theme
    finally:
        manager.close()


class LookingQuizKind(CalcQuizKind):
    """An outside kind that draws its own looks, names its own screen and has a back button."""

    action_sets = {None: frozenset({"click", "key", "back", "answer", "terminate"})}
    computer = "ubuntu"

    def looks_for(self, variant=None):
        return Looks(((800, 600),), distractors=("toast",))


def test_an_outside_kind_decides_its_presentation_screen_and_reference_verbs(monkeypatch):
    """What guiforge decided by domain name (which looks a task draws, what a computer-use API
    calls the screen, whether the reference clears pop-ups or presses a browser's back) an
    outside kind decides for its own tasks."""
    import guiforge.envs.kinds as kinds
    from guiforge.envs.base import Observation
    from guiforge.harness.formats import coord_system, get_format
    from guiforge.presentation import harder_presentation
    from guiforge.teacher.reference import ReferenceProgram

    monkeypatch.setattr(kinds, "resolve_kind", lambda ref: LookingQuizKind() if ref == "quiz" else _builtin(ref))
    drawn = [kind_of("quiz").presentation(f"tsk_{i}", 3) for i in range(40)]
    assert {p.viewport for p in drawn} == {(800, 600)} and {d.kind for p in drawn for d in p.distractors} == {"toast"}
    assert harder_presentation(None, "tsk_1", 3).viewport is None  # no looks: nothing is drawn
    computer = get_format("openai_computer")
    screen = coord_system("pixels", (800, 600))
    assert computer.tools("quiz", None, screen)[0]["environment"] == "ubuntu"
    assert computer.tools("desktop", "gui", screen)[0]["environment"] == "linux"
    assert computer.tools("web", None, screen)[0]["environment"] == "browser"  # the format's option
    program = ReferenceProgram([{"do": "key", "keys": ["back"]}], "quiz")
    assert program.distractors == ("toast",)
    assert program.send(Observation(width=800, height=600)).action.type == "back"
    assert ReferenceProgram([{"do": "key", "keys": ["back"]}], "desktop", "gui").send(
        Observation(width=800, height=600)).action.keys == ["back"]  # LibreOffice has no browser back
