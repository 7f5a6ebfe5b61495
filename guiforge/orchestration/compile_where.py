"""Where a pipeline came from (its file and the line of every field), for the compile step's
errors: a field path becomes one line naming the file, the field and its line."""

from __future__ import annotations

from typing import NoReturn

from guiforge.config import PipelineConfig
from guiforge.errors import ConfigError
from guiforge.yamlfile import Loc, line_of


class Where:
    """Where the pipeline came from: turns a field path into a one-line ConfigError."""

    def __init__(self, source: str, lines: dict, config: PipelineConfig):
        self.source = source
        self.lines = lines
        self.config = config

    def declared(self, stage: str) -> str:
        """The stage of the file a stage comes from (``rollouts_r2`` -> ``rollouts``)."""
        if stage in self.config.stages:
            return stage
        base = stage.rsplit("_r", 1)[0]
        return base if base in self.config.stages else stage

    def fail(self, loc: Loc, message: str) -> NoReturn:
        if loc[:1] == ("stages",) and len(loc) > 1:
            loc = ("stages", self.declared(str(loc[1])), *loc[2:])
        raise ConfigError(self.source, ".".join(map(str, loc)), message, line_of(self.lines, loc))
