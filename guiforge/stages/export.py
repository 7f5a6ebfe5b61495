"""export: the run's training datasets, written as folders that load with no guiforge
installed (Hugging Face / TRL Parquet with a dataset card, LLaMA-Factory sharegpt), one
``exports`` row per dataset and an ``exclusions`` row per step or trajectory left out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from guiforge.errors import GuiforgeError
from guiforge.export import ExportOptions, export_run
from guiforge.export.source import READS
from guiforge.export.target import check_target
from guiforge.plugins import PluginRef
from guiforge.stages.base import ShardPlan, Stage, StageConfig

REQUIRED = ["trajectories", "steps", "images", "tasks", "worlds"]


class ExportConfig(StageConfig):
    out: str | None = Field(default=None, description="folder for the exports; default: exports/<run_id> beside a "
                                                      "local lake")
    formats: list[Annotated[str, PluginRef("guiforge.exports")]] = Field(
        default_factory=lambda: ["hf", "llamafactory"], description="export formats: hf, trl, llamafactory, a "
                                                                     "registered one or module:Class")
    action_format: Annotated[str, PluginRef("guiforge.action_formats")] = Field(
        default="guiforge", description="what the student writes: a text action format (guiforge, qwen_vl, uitars, "
                                        "pyautogui, module:Class)")
    coords: Literal["grid999", "grid1000", "pixels", "unit", "resized"] | None = Field(
        default=None, description="the student's coordinate convention; default: the action format's own")
    context: str | None = Field(default=None, description="how prompts are built: summary:1 (None: the current "
                                                          "screenshot, earlier steps as lines), recorded, full, "
                                                          "summary:N, last_k:K, window:K:O")
    samples_per_task: int | None = Field(default=1, ge=1, description="SFT trajectories per task, the best "
                                                                      "first (null: every accepted one)")
    max_length: int | None = Field(default=1024, ge=64, description="tokens a row may reach in the trainer (TRL's "
                                                                    "SFTConfig default); null: rows are not fitted")
    min_image_tokens: int = Field(default=256, ge=1, description="the least a fitted screenshot shrinks to")
    validation: float = Field(default=0.05, ge=0, le=0.5, description="share of worlds held out for validation")
    test: float = Field(default=0.05, ge=0, le=0.5, description="share of worlds held out for test")
    rl_protocol: Literal["tools", "completion"] = Field(
        default="tools", description="RL prompts ask for one act tool call a turn (multi-turn GRPO, GuiforgeEnv) or "
                                     "every action in one reply (TaskReward)")
    sft_tiers: list[Literal["gold", "silver", "partial"]] = Field(
        default_factory=lambda: ["gold", "silver"], min_length=1,
        description="quality tiers the default SFT configs hold (every tier but reject also has its own config)")
    prm: bool = Field(default=False, description="also write process-reward rows (screen, history, action -> "
                                                 "progress delta) for every valid trajectory: the prm config")
    reads: list[str] = Field(default_factory=lambda: list(REQUIRED),
                             description="tables this stage waits for: add judgments, rl_tasks, relabels when the "
                                         "pipeline has the stages that write them")


class ExportStage(Stage):
    kind = "export"
    config_model = ExportConfig
    description = "SFT (TRL conversational, prompt-completion), RL prompts, LLaMA-Factory; a card per export"
    config: ExportConfig

    def inputs(self) -> list[str]:
        return list(dict.fromkeys([*REQUIRED, *self.config.reads]))

    def outputs(self) -> list[str]:
        return ["exports", "exclusions"]

    def reads(self) -> dict[str, list[str]]:
        return {table: columns for table, columns in READS.items() if table in self.inputs()}

    def out_dir(self, ctx) -> Path:
        if self.config.out:
            return Path(self.config.out) / ctx.run_id
        if not ctx.lake.is_local:
            raise GuiforgeError(f"stages.{self.name}.out: the lake {ctx.lake.uri} is not on local disk: "
                                "set a local folder for the exports")
        return Path(ctx.lake.root).parent / "exports" / ctx.run_id

    def preflight(self) -> None:
        try:
            check_target(self.config.action_format, self.config.coords)
        except GuiforgeError as exc:  # "--coords: ..." as the config field it came from
            field = str(exc).replace("--action-format", "action_format", 1).replace("--coords", "coords", 1)
            raise GuiforgeError(f"stages.{self.name}.{field}") from None

    def plan(self, ctx) -> list[ShardPlan]:
        inputs = sorted({s.fingerprint for t in self.inputs() for s in ctx.input_shards(t, reader=self.name)})
        return [ShardPlan(key="export", params={"out": str(self.out_dir(ctx))}, inputs=inputs)]

    def options(self) -> ExportOptions:
        c = self.config
        return ExportOptions(c.samples_per_task, c.max_length, c.min_image_tokens, c.validation, c.test, c.rl_protocol,
                             tuple(c.sft_tiers), c.prm)

    def run(self, ctx, shard: ShardPlan):
        exports, exclusions = [], []
        for fmt in self.config.formats:
            result = export_run(ctx.lake, Path(shard.params["out"]) / fmt, run_id=ctx.run_id, fmt=fmt,
                                coords=self.config.coords, context=self.config.context,
                                action_format=self.config.action_format, options=self.options())
            exports += result.exports
            if not exclusions:  # every format reads the same rows: one set of exclusions
                exclusions = result.exclusions
        return {"exports": exports, "exclusions": exclusions}
