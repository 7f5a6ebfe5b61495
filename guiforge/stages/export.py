"""export: the run's training datasets, written as folders that load with no guiforge
installed (Hugging Face / TRL Parquet with a dataset card, LLaMA-Factory sharegpt), one
``exports`` row per dataset and an ``exclusions`` row per step or trajectory left out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from guiforge.errors import GuiforgeError
from guiforge.export import export_run
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
    context: str | None = Field(default=None, description="recorded prompts (None) or a context policy to rebuild "
                                                          "them with: full, summary, last_k:K, window:K:O")
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

    def run(self, ctx, shard: ShardPlan):
        exports, exclusions = [], []
        for fmt in self.config.formats:
            result = export_run(ctx.lake, Path(shard.params["out"]) / fmt, run_id=ctx.run_id, fmt=fmt,
                                coords=self.config.coords, context=self.config.context,
                                action_format=self.config.action_format)
            exports += result.exports
            if not exclusions:  # every format reads the same rows: one set of exclusions
                exclusions = result.exclusions
        return {"exports": exports, "exclusions": exclusions}
