"""User-facing errors: one line that names the file, the field and what to do."""

from __future__ import annotations


class GuiforgeError(Exception):
    """An error caused by input the user can fix; the CLI prints it as one line."""


class ConfigError(GuiforgeError):
    def __init__(self, file: str, field: str, message: str, line: int | None = None):
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")
        self.file, self.field, self.line = file, field, line
