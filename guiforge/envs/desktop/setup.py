"""The desktop task's initial state ``s0``: ``TaskSpec.setup`` for domain ``desktop``.

::

    setup = {
        "files": {                                   # workspace-relative path -> content
            "report.xlsx": b"PK...",                 #   bytes: the file's content
            "data/raw.csv": {"text": "a,b\\n1,2\\n"},  #   text (UTF-8)
            "deck.pptx": {"base64": "UEsDB..."},     #   base64, for JSON-only carriers
            "logo.png": {"path": "/abs/host/logo.png"},  # a host file, copied
            "notes.docx": "/abs/host/notes.docx",    #   a str is a host path too (absolute)
        },
        "open": "report.xlsx",   # optional: the document LibreOffice shows at the start
        "app": "calc",           # optional: calc | impress | writer; with no "open", a new
                                 # document of this app; inferred from "open" or task.apps
    }

With neither ``open`` nor an app, no LibreOffice starts and the screen stays empty (a
hybrid task done in the terminal).
The workspace is cleared and refilled on every reset, so the task starts from exactly
these files. Inside the sandbox and in LibreOffice the workspace is ``/workspace``.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

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

    def load(self, name: str) -> bytes:
        given = [k for k in ("text", "base64", "path") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"setup.files[{name!r}] needs exactly one of text, base64, path; got {given}")
        if self.text is not None:
            return self.text.encode()
        if self.base64 is not None:
            return base64.b64decode(self.base64)
        return _host_file(name, self.path or "")


def _host_file(name: str, path: str | os.PathLike) -> bytes:
    p = Path(path)
    if not p.is_absolute():
        raise ValueError(f"setup.files[{name!r}]: host path {str(path)!r} must be absolute "
                         "(or give the content as bytes, {'text': ...} or {'base64': ...})")
    if not p.is_file():
        raise FileNotFoundError(f"setup.files[{name!r}]: host file {p} does not exist")
    return p.read_bytes()


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

    def load_files(self) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for name, source in self.files.items():
            if isinstance(source, bytes):
                out[name] = source
            elif isinstance(source, FileContent):
                out[name] = source.load(name)
            else:
                out[name] = _host_file(name, source)
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
