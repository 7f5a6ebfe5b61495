"""Training datasets from a run: SFT rows (TRL conversational and prompt-completion, with
``datasets.Image`` columns), the RL pool as GRPO prompts, LLaMA-Factory sharegpt, a dataset
card, and an ``exports`` row per export. Entry point: :func:`export_run`."""

from guiforge.export.formats import EXPORT_FORMATS, ExportFormat, ExportJob
from guiforge.export.run import ExportOptions, ExportResult, commit_export, export_run

__all__ = ["EXPORT_FORMATS", "ExportFormat", "ExportJob", "ExportOptions", "ExportResult", "commit_export",
           "export_run"]
