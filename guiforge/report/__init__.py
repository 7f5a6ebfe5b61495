"""`guiforge report`: one static, offline HTML page of plots and sample trajectories over the
lake (funnel, success by domain and skill, steps, exclusions, judge agreement, RL pool,
rounds, relabels, diagnoses). ``write_report(lake, out, run_id)`` is the entry point."""

from guiforge.report.build import build_sections, write_report

__all__ = ["build_sections", "write_report"]
