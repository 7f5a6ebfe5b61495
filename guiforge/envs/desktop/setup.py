"""The desktop task's initial state ``s0``: ``TaskSpec.setup`` for domain ``desktop``.

::

    setup = {
        "files": {                                   # workspace-relative path -> content
            "report.xlsx": b"PK...",                 #   bytes: the file's content
            "data/raw.csv": {"text": "a,b\\n1,2\\n"},  #   text (UTF-8)
            "deck.pptx": {"base64": "UEsDB..."},     #   base64, for JSON-only carriers
            "logo.png": {"path": "logo.png"},        # a host file under the prepared-files
            "notes.docx": "/prepared/notes.docx",    #   root, copied; a str is such a path too
        },
        "open": "report.xlsx",   # optional: the document LibreOffice shows at the start
        "app": "calc",           # optional: calc | impress | writer; with no "open", a new
                                 # document of this app; inferred from "open" or task.apps
    }

With neither ``open`` nor an app, no LibreOffice starts and the screen stays empty (a
hybrid task done in the terminal).
The workspace is cleared and refilled on every reset, so the task starts from exactly
these files. Inside the sandbox and in LibreOffice the workspace is ``/workspace``. Host
files are read only under the environment's prepared-files root (none by default; see
:mod:`guiforge.envs.prepared`).
"""

from __future__ import annotations

import base64
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from guiforge.envs.prepared import read_prepared

App = Literal["calc", "impress", "writer"]

APP_BY_SUFFIX: dict[str, App] = {
    **dict.fromkeys((".xlsx", ".xls", ".xlsm", ".ods", ".csv", ".tsv"), "calc"),
    **dict.fromkeys((".pptx", ".ppt", ".odp"), "impress"),
    **dict.fromkeys((".docx", ".doc", ".odt", ".rtf", ".txt", ".md", ".html"), "writer"),
}


class FileContent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    base64: str | None = None
    path: str | None = None

    def load(self, name: str, files_root: Path | None = None) -> bytes:
        given = [k for k in ("text", "base64", "path") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"setup.files[{name!r}] needs exactly one of text, base64, path; got {given}")
        if self.text is not None:
            return self.text.encode()
        if self.base64 is not None:
            return base64.b64decode(self.base64)
        return read_prepared(files_root, name, self.path or "")


class DesktopSetup(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    files: dict[str, bytes | FileContent | str | Path] = {}
    open: str | None = None
    app: App | None = None

    @field_validator("files")
    @classmethod
    def _relative_names(cls, files: dict[str, Any]) -> dict[str, Any]:
        for name in files:
            rel = PurePosixPath(name)
            if rel.is_absolute() or ".." in rel.parts or not rel.parts:
                raise ValueError(f"setup.files key {name!r} must be a relative path inside the workspace")
        return files

    @classmethod
    def from_task(cls, setup: dict[str, Any], apps: list[str]) -> DesktopSetup:
        parsed = cls.model_validate(setup)
        if parsed.open is not None and parsed.open not in parsed.files:
            raise ValueError(f"setup.open {parsed.open!r} is not one of setup.files: "
                             f"{sorted(parsed.files)}")
        if parsed.app is None:
            parsed.app = infer_app(parsed.open, apps)
        return parsed

    def load_files(self, files_root: Path | None = None) -> dict[str, bytes]:
        """Every file's bytes; host files only from under ``files_root``."""
        out: dict[str, bytes] = {}
        for name, source in self.files.items():
            if isinstance(source, bytes):
                out[name] = source
            elif isinstance(source, FileContent):
                out[name] = source.load(name, files_root)
            else:
                out[name] = read_prepared(files_root, name, str(source))
        return out


def infer_app(document: str | None, apps: list[str]) -> App | None:
    if document is not None:
        app = APP_BY_SUFFIX.get(PurePosixPath(document).suffix.lower())
        if app is None:
            raise ValueError(f"cannot tell which LibreOffice app opens {document!r}; set setup.app")
        return app
    for name in apps:  # "calc", "libreoffice_calc", "libreoffice-impress", ...
        for app in ("calc", "impress", "writer"):
            if app in name.lower():
                return app  # type: ignore[return-value]
    return None
