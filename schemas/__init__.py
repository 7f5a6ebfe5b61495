"""The Arrow schema of every lake table: the single source of truth.

Installed as ``guiforge.schemas``. Writers validate against these schemas, the DuckDB
catalog and Hugging Face ``Features`` are derived from them. Bump ``SCHEMA_VERSION`` (and
say so in the README) whenever a core column changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

# 2: manifest entries record paths relative to the lake root, with each file's size and sha256.
# 3: trajectories.failure_kind (env_failure | model_failure | verifier_failure | parse_failure):
#    a fault has success and score null; judgments.failure_kind: the judge's own model failure.
SCHEMA_VERSION = "3"

# Canonical action on the 0-999 grid (MintAct's 999x999) plus the screenshot's pixel size.
ACTION_TYPE = pa.struct(
    [
        ("type", pa.string()),
        ("x", pa.int32()),
        ("y", pa.int32()),
        ("x2", pa.int32()),
        ("y2", pa.int32()),
        ("text", pa.string()),
        ("keys", pa.list_(pa.string())),
        ("direction", pa.string()),
        ("amount", pa.int32()),
        ("button", pa.string()),
        ("app", pa.string()),
        ("status", pa.string()),
        ("answer", pa.string()),
    ]
)


@dataclass(frozen=True)
class TableSpec:
    name: str
    description: str
    key: tuple[str, ...]
    schema: pa.Schema
    core: tuple[str, ...] = field(default=())

    def with_metadata(self) -> pa.Schema:
        return self.schema.with_metadata(
            {b"guiforge.table": self.name.encode(), b"guiforge.schema_version": SCHEMA_VERSION.encode()}
        )


def _spec(name: str, description: str, key: tuple[str, ...], fields: list, core: tuple[str, ...]):
    # Every row carries its run id for lineage; the run is also the hive partition.
    schema = pa.schema([pa.field("run_id", pa.string(), nullable=False), *fields])
    return TableSpec(name, description, key, schema, core)


def _f(name: str, typ: pa.DataType, nullable: bool = True) -> pa.Field:
    return pa.field(name, typ, nullable=nullable)


_str_list = pa.list_(pa.string())

TASK_FIELDS = [
    _f("task_id", pa.string(), False),
    _f("world_id", pa.string()),
    _f("skill_id", pa.string()),
    _f("skill_version", pa.string()),
    _f("domain", pa.string(), False),
    _f("variant", pa.string()),
    _f("apps", _str_list),
    _f("instruction", pa.string(), False),
    _f("setup_json", pa.string()),
    _f("rubric_json", pa.string()),
    _f("reference_json", pa.string()),
    _f("answer", pa.string()),
    _f("binding_json", pa.string()),
    _f("feasible", pa.bool_()),
    _f("difficulty", pa.string()),
    _f("max_steps", pa.int32()),
    _f("parent_task_id", pa.string()),
    _f("round", pa.int32()),
    _f("author_model", pa.string()),
    _f("prompt_hash", pa.string()),
    _f("gate_json", pa.string()),
    _f("diagnosis_id", pa.string()),  # the diagnosis a resynthesized task answers
    _f("presentation_json", pa.string()),  # theme, viewport, distractors: seeded, recorded
]
TASK_CORE = ("task_id", "world_id", "skill_id", "domain", "apps", "instruction", "parent_task_id", "round")

TABLES: dict[str, TableSpec] = {
    spec.name: spec
    for spec in [
        _spec(
            "personas",
            "People the worlds are built around",
            ("persona_id",),
            [
                _f("persona_id", pa.string(), False),
                _f("name", pa.string()),
                _f("locale", pa.string()),
                _f("age", pa.int32()),
                _f("occupation", pa.string()),
                _f("employer", pa.string()),
                _f("city", pa.string()),
                _f("country", pa.string()),
                _f("email", pa.string()),
                _f("phone", pa.string()),
                _f("country_code", pa.string()),
                _f("region", pa.string()),
                _f("timezone", pa.string()),
                _f("language", pa.string()),
                _f("traits", _str_list),
                _f("goals", _str_list),
                _f("builder", pa.string()),
                _f("model", pa.string()),
                _f("seed", pa.int64()),
            ],
            ("persona_id",),
        ),
        _spec(
            "worlds",
            "A persona's world: contacts, events, facts and documents (full JSON in world_json)",
            ("world_id",),
            [
                _f("world_id", pa.string(), False),
                _f("persona_id", pa.string(), False),
                _f("scenario", pa.string(), False),
                _f("title", pa.string()),
                _f("base_date", pa.string()),
                _f("currency", pa.string()),
                _f("n_contacts", pa.int32()),
                _f("n_events", pa.int32()),
                _f("n_emails", pa.int32()),
                _f("n_documents", pa.int32()),
                _f("n_facts", pa.int32()),
                _f("n_transactions", pa.int32()),
                _f("n_chats", pa.int32()),
                _f("world_json", pa.string()),
                _f("builder", pa.string()),
                _f("model", pa.string()),
                _f("prompt_hash", pa.string()),
                _f("seed", pa.int64()),
            ],
            ("world_id", "persona_id", "scenario"),
        ),
        _spec(
            "skills",
            "Skill cards in use by a run",
            ("skill_id",),
            [
                _f("skill_id", pa.string(), False),
                _f("version", pa.string()),
                _f("domains", _str_list),
                _f("apps", _str_list),
                _f("description", pa.string()),
                _f("difficulty", pa.string()),
                _f("max_steps", pa.int32()),
                _f("card_yaml", pa.string()),
                _f("card_sha256", pa.string()),
                _f("cross_app", pa.bool_()),
                _f("source", pa.string()),
                _f("author_model", pa.string()),
                _f("prompt_hash", pa.string()),
                _f("author_calls", pa.int32()),
            ],
            ("skill_id",),
        ),
        _spec(
            "tasks",
            "Gated tasks x = (E, s0, g, V): environment, setup recipe, instruction, verifier",
            ("task_id",),
            TASK_FIELDS,
            TASK_CORE,
        ),
        _spec(
            "task_candidates",
            "Tasks rendered from skill cards before the package gate (same columns as tasks)",
            ("task_id",),
            TASK_FIELDS,
            TASK_CORE,
        ),
        _spec(
            "exclusions",
            "Every row a gate or filter dropped, with its reason",
            ("stage", "gate", "subject_id"),
            [
                _f("stage", pa.string(), False),
                _f("gate", pa.string(), False),
                _f("reason", pa.string(), False),
                _f("subject_id", pa.string(), False),
                _f("subject_table", pa.string()),
                _f("details_json", pa.string()),
            ],
            ("stage", "gate", "reason", "subject_id"),
        ),
        _spec(
            "trajectories",
            "One teacher rollout of a task",
            ("trajectory_id",),
            [
                _f("trajectory_id", pa.string(), False),
                _f("task_id", pa.string(), False),
                _f("sample_index", pa.int32(), False),
                _f("success", pa.bool_()),
                _f("score", pa.float64()),
                _f("env_failure", pa.bool_()),  # kept for readers of version 2: failure_kind = env_failure
                _f("n_steps", pa.int32()),
                _f("criteria_json", pa.string()),
                _f("teacher_model", pa.string()),
                _f("harness_json", pa.string()),
                _f("prompt_hash", pa.string()),
                _f("seed", pa.int64()),
                _f("wall_s", pa.float64()),
                _f("input_tokens", pa.int64()),
                _f("output_tokens", pa.int64()),
                _f("error", pa.string()),
                # the scripted teacher's mistakes and corrections: [{turn, event, kind}]
                _f("teacher_events_json", pa.string()),
                # why the trajectory has no valid outcome (guiforge.failures); null: it has one
                _f("failure_kind", pa.string()),
                # rollouts' tier: breadth (SFT coverage) or depth (k samples, read by rl_select); null: before tiers
                _f("tier", pa.string()),
            ],
            ("trajectory_id", "task_id", "sample_index", "success", "score", "env_failure", "n_steps",
             "failure_kind"),
        ),
        _spec(
            "steps",
            "One step of a trajectory: what the policy saw, thought and did",
            ("trajectory_id", "step_index"),
            [
                _f("trajectory_id", pa.string(), False),
                _f("step_index", pa.int32(), False),
                _f("image_sha256", pa.string()),
                _f("image_width", pa.int32()),
                _f("image_height", pa.int32()),
                _f("thought", pa.string()),
                _f("raw_output", pa.string()),
                _f("action", ACTION_TYPE),
                _f("action_pixels_json", pa.string()),
                _f("feedback", pa.string()),
                _f("error", pa.string()),
                _f("latency_s", pa.float64()),
                _f("input_tokens", pa.int64()),
                _f("output_tokens", pa.int64()),
                _f("prompt_hash", pa.string()),
                _f("prompt_messages", pa.int32()),
                _f("prefix_messages", pa.int32()),
                # The prompt by reference: [{"role", "parts": [text | {"image": sha256}]}]
                _f("prompt_json", pa.string()),
                # The element under the action's point: {id, tag, role, type, label, box}
                _f("target_json", pa.string()),
                # Every reply of the step in order: [{"raw", "error", "cached"}] (retries too)
                _f("attempts_json", pa.string()),
                # What the frame showed (guiforge.envs.screen_facts): route, labelled elements,
                # focus, dialog, OCR text already read, terminal output; for thoughts written later
                _f("screen_json", pa.string()),
                # The rubric on the state this step left (guiforge.verify.progress): the weighted
                # fraction of required criteria met, its change since the state before the step,
                # {criterion: [before, after]} for the criteria it flipped, and whether it took
                # back a required criterion; null on rows from before progress was tracked
                _f("progress", pa.float64()),
                _f("progress_delta", pa.float64()),
                _f("criteria_flips_json", pa.string()),
                _f("undoes_progress", pa.bool_()),
            ],
            ("trajectory_id", "step_index", "image_sha256", "thought", "action"),
        ),
        _spec(
            "images",
            "Screenshots, content-addressed: an identical frame is stored once",
            ("sha256",),
            [
                _f("sha256", pa.string(), False),
                _f("data", pa.binary(), False),
                _f("width", pa.int32()),
                _f("height", pa.int32()),
                _f("format", pa.string()),
                # 48x48 grayscale pixels, made at capture (guiforge.lake.thumbs); null in older lakes
                _f("thumb", pa.binary()),
            ],
            ("sha256", "data", "width", "height", "format"),
        ),
        _spec(
            "blobs",
            "Files (office documents, archives), content-addressed",
            ("sha256",),
            [
                _f("sha256", pa.string(), False),
                _f("data", pa.binary(), False),
                _f("size", pa.int64()),
                _f("media_type", pa.string()),
                _f("name", pa.string()),
            ],
            ("sha256", "data"),
        ),
        _spec(
            "judgments",
            "A judge's verdict on a trajectory, the code verifier's beside it, and SFT acceptance",
            ("trajectory_id", "judge"),
            [
                _f("trajectory_id", pa.string(), False),
                _f("task_id", pa.string()),
                _f("domain", pa.string()),
                _f("skill_id", pa.string()),
                _f("judge", pa.string(), False),  # the judge's name (the stage's config)
                _f("judge_model", pa.string()),
                _f("prompt_hash", pa.string()),
                _f("success", pa.bool_()),
                _f("score", pa.float64()),
                _f("verifier_success", pa.bool_()),
                _f("agrees", pa.bool_()),
                _f("rationale", pa.string()),
                _f("evidence_steps", pa.list_(pa.int32())),  # step indices the judge relied on
                _f("evidence_images", _str_list),  # their screenshots' sha256
                _f("flags", _str_list),  # loop, step_budget, feedback_error, no_final_state, ...
                _f("parse_failure", pa.bool_()),
                _f("failure_kind", pa.string()),  # the judge's own: model_failure | parse_failure
                _f("accepted", pa.bool_()),  # for SFT, under accept_policy
                _f("accept_policy", pa.string()),  # verifier | judge | both
                _f("accept_reason", pa.string()),
                # gold | silver | partial | reject (guiforge.judge.tiers); null before tiers
                _f("quality_tier", pa.string()),
                _f("input_tokens", pa.int64()),
                _f("output_tokens", pa.int64()),
                _f("cost_usd", pa.float64()),
            ],
            ("trajectory_id", "judge", "success"),
        ),
        _spec(
            "rl_tasks",
            "Tasks selected for RL: success rate near 0.5, mixed outcomes, domain quotas",
            ("task_id",),
            [
                _f("task_id", pa.string(), False),
                _f("domain", pa.string()),
                _f("skill_id", pa.string()),
                _f("world_id", pa.string()),
                _f("variant", pa.string()),
                _f("apps", _str_list),
                _f("instruction", pa.string()),
                _f("n_samples", pa.int32()),  # k
                _f("n_valid", pa.int32()),  # k less environment failures
                _f("n_success", pa.int32()),
                _f("success_rate", pa.float64()),
                _f("selected_reason", pa.string()),
                _f("rank", pa.int32()),  # order of choice inside its domain
                _f("round", pa.int32()),
                _f("quota", pa.int32()),  # the domain's share of the budget
                _f("filled", pa.int32()),  # what the domain got after the fallback
                _f("task_json", pa.string()),  # the whole task row: setup, rubric (verifier), reference
            ],
            ("task_id", "success_rate"),
        ),
        _spec(
            "relabels",
            "Relabeled thoughts, with the thought/action consistency verdict and what training reads",
            ("trajectory_id", "step_index"),
            [
                _f("trajectory_id", pa.string(), False),
                _f("step_index", pa.int32(), False),
                _f("thought", pa.string()),
                _f("original_thought", pa.string()),
                _f("consistent", pa.bool_()),
                _f("failed_check", pa.string()),  # verb | element | text | direction | ... (None if consistent)
                _f("attempts", pa.int32()),
                _f("mode", pa.string()),  # reasoning | direct
                _f("assistant_text", pa.string()),  # the SFT target in the harness's output format
                _f("action_span_start", pa.int32()),  # character span of the action in assistant_text
                _f("action_span_end", pa.int32()),
                _f("duplicate_target", pa.bool_()),  # another query aims at the same spot on this frame
                _f("relabeler_model", pa.string()),
                _f("prompt_hash", pa.string()),
            ],
            ("trajectory_id", "step_index", "thought", "consistent"),
        ),
        _spec(
            "diagnoses",
            "Why tasks failed (action, trajectory, knowledge level), and what resynthesis it proposes",
            ("diagnosis_id",),
            [
                _f("diagnosis_id", pa.string(), False),
                _f("task_id", pa.string()),  # None for knowledge-level rows (aggregated over tasks)
                _f("level", pa.string()),  # action | trajectory | knowledge
                _f("failure_mode", pa.string()),
                _f("analysis", pa.string()),
                _f("evidence_json", pa.string()),  # trajectory ids, step indices
                _f("skill_id", pa.string()),
                _f("domain", pa.string()),
                _f("app", pa.string()),
                _f("proposal_json", pa.string()),
                _f("diagnoser_model", pa.string()),
                _f("prompt_hash", pa.string()),
                _f("round", pa.int32()),
            ],
            ("diagnosis_id", "task_id", "level", "failure_mode"),
        ),
        _spec(
            "preference_pairs",
            "Step-level preference pairs: where a failed sample departs from a successful one of the same task "
            "after a shared prefix, the successful action (chosen) against the failed one (rejected)",
            ("pair_id",),
            [
                _f("pair_id", pa.string(), False),
                _f("task_id", pa.string(), False),
                _f("domain", pa.string()),
                _f("skill_id", pa.string()),
                _f("chosen_trajectory_id", pa.string(), False),  # the successful sample
                _f("rejected_trajectory_id", pa.string(), False),  # the failed one: its prompt is the context
                _f("step_index", pa.int32(), False),  # the departing step, in the failed sample
                _f("chosen_step_index", pa.int32(), False),  # the same moment in the successful sample
                _f("shared_steps", pa.int32()),  # steps both took before departing
                _f("same_screen", pa.bool_()),  # both saw the very same frame there
                _f("image_sha256", pa.string()),  # the failed sample's frame at the departure
                _f("failure_mode", pa.string()),  # how they departed (the diagnose stage's modes)
                _f("reason", pa.string()),  # why, in words
                _f("detail_json", pa.string()),
                _f("chosen_action", ACTION_TYPE),
                _f("rejected_action", ACTION_TYPE),
                _f("chosen_score", pa.float64()),
                _f("rejected_score", pa.float64()),
                _f("round", pa.int32()),
            ],
            ("pair_id", "task_id", "chosen_trajectory_id", "rejected_trajectory_id", "step_index", "failure_mode"),
        ),
        _spec(
            "exports",
            "Datasets exported from a run",
            ("export_id",),
            [
                _f("export_id", pa.string(), False),
                _f("kind", pa.string()),
                _f("path", pa.string()),
                _f("n_rows", pa.int64()),
                _f("format", pa.string()),
                _f("coords", pa.string()),
                _f("source_run", pa.string()),
                _f("created_at", pa.string()),
                _f("details_json", pa.string()),
            ],
            ("export_id", "kind", "n_rows"),
        ),
        _spec(
            "grounding",
            "A referring expression for one element of a rendered screen, its box and centre (or a refusal)",
            ("grounding_id",),
            [
                _f("grounding_id", pa.string(), False),
                _f("screen_id", pa.string(), False),
                _f("task_id", pa.string()),  # the task whose app state the screen shows
                _f("world_id", pa.string()),
                _f("domain", pa.string(), False),
                _f("app", pa.string()),
                _f("route", pa.string()),
                _f("theme", pa.string()),
                _f("viewport", pa.list_(pa.int32())),  # CSS width, height
                _f("distractors", _str_list),  # distractor kinds on screen (cookie, dialog, toast)
                _f("image_sha256", pa.string(), False),
                _f("image_width", pa.int32()),
                _f("image_height", pa.int32()),
                _f("instruction", pa.string(), False),
                # text | role_position | functional | instruction | refusal
                _f("expression_kind", pa.string(), False),
                _f("data_type", pa.string()),  # text (the element shows text) | icon | none (refusal)
                _f("refusal", pa.bool_(), False),  # the expression names an element not on this screen
                _f("near_miss", pa.bool_()),  # another element on screen has the same or a similar name
                _f("small_target", pa.bool_()),  # under 0.1% of the screen's area
                _f("dense_screen", pa.bool_()),  # 40 or more hit-testable elements on the screen
                _f("n_elements", pa.int32()),  # hit-testable elements on the screen
                _f("element_role", pa.string()),
                _f("element_name", pa.string()),
                _f("element_id", pa.string()),
                # [x, y, width, height] in screenshot pixels; null for a refusal
                _f("bbox", pa.list_(pa.int32())),
                _f("point_x", pa.int32()),  # the box's centre in screenshot pixels, hit-tested
                _f("point_y", pa.int32()),
                _f("grid_x", pa.int32()),  # the same point on the 0-999 grid
                _f("grid_y", pa.int32()),
                _f("distractor_bbox", pa.list_(pa.int32())),  # the near miss's box
                _f("distractor_name", pa.string()),
            ],
            ("grounding_id", "image_sha256", "instruction", "bbox", "refusal"),
        ),
        _spec(
            "grounding_screens",
            "A screen rendered for grounding: its elements by hit-test outcome",
            ("screen_id",),
            [
                _f("screen_id", pa.string(), False),
                _f("task_id", pa.string()),
                _f("domain", pa.string(), False),
                _f("app", pa.string()),
                _f("route", pa.string()),
                _f("via", pa.string()),  # the element pressed to reach it from the app's start (null: the start)
                _f("theme", pa.string()),
                _f("viewport", pa.list_(pa.int32())),
                _f("distractors", _str_list),
                _f("image_sha256", pa.string(), False),
                _f("n_candidates", pa.int32()),  # interactive elements rendered
                _f("n_ok", pa.int32()),  # visible and hit-testable at their centre: the only ones emitted
                _f("n_occluded", pa.int32()),  # something else is hit at the centre
                _f("n_hidden", pa.int32()),  # visibility hidden or opacity 0
                _f("n_offscreen", pa.int32()),  # outside the viewport or clipped away
                _f("n_rows", pa.int32()),
                _f("n_refusals", pa.int32()),
                _f("render_s", pa.float64()),
            ],
            ("screen_id", "domain", "n_candidates", "n_ok", "n_occluded"),
        ),
    ]
}


def table_spec(name: str) -> TableSpec:
    try:
        return TABLES[name]
    except KeyError:
        raise KeyError(f"unknown lake table {name!r}; known tables: {', '.join(TABLES)}") from None


def hf_features(name: str):
    """Hugging Face ``datasets.Features`` for a table, derived from its Arrow schema."""
    # heavy: datasets, numpy, pandas, imported when this runs
    from datasets import Features

    return Features.from_arrow_schema(table_spec(name).schema)
