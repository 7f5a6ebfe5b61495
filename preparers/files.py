"""World -> a workspace of real files whose facts agree with the world.

API
---
``render_document(world, document_id, fmt=None) -> (filename, bytes)``
    One document in one format (default: its own filename's extension).
``prepare_workspace(world, spec) -> dict[str, bytes]``
    Every file a setup spec asks for, by workspace-relative path.
``build_workspace(world, spec) -> Workspace``
    The same files plus a manifest (``Workspace.manifest``: path -> ``FileInfo``) saying where
    each file came from and what a rubric may rely on: the dirt a dirty CSV holds, the bug a
    script has and what it prints with and without it.
``read_file_text(name, data) -> str``
    Any of these formats back as text (see ``file_read``), for the file gate and verifiers.

Formats by document kind (``FORMATS``): xlsx for spreadsheets, invoices, receipts and forms;
pptx for slides; docx, pdf, md and txt for every kind; csv for spreadsheets (the first sheet;
``csv`` entries choose the sheet, the total row and dirt). ``IMAGE_FORMATS``: png for
invoices, receipts and itineraries (the PDF rendered to an image, for OCR tasks; one-page
documents only; read back by OCR, so a fact's legibility is checked per task by the file gate).
A png entry's ``look`` makes it a clean render, a scan or a phone photo (``file_scan``,
``image_looks``); the manifest's ``FileInfo.look`` holds the parameters applied.

Spec shape (``WorkspaceSpec``; a dict in a skill card's setup, validated by pydantic)::

    folder: "Documents"            # optional prefix for every path below ("" = root)
    documents:                     # "all", or a list of ids / entries
      - exp_claim                  # shorthand: native format, the document's own filename
      - document: inv_hotel
        format: xlsx               # xlsx|pptx|docx|pdf|md|txt|csv|png (default: own extension)
        name: hotel.xlsx           # default: the document's filename with this extension
        formulas: true             # xlsx: SUM formulas with cached values (false: values)
      - document: rcpt_taxi_1
        format: png
        look: scan                 # png: clean|scan|photo|auto (default auto: the task's
                                   #   wording; see image_looks) or {kind, seed, parameters}
      - document: talk_slides      # pptx: append a table slide + chart slide per figure
        figures: [{document: travel_budget, sheet: Budget, chart: true}]
    csv:
      - document: exp_claim
        sheet: Expenses            # default: the first sheet
        name: expenses.csv         # default: <doc stem>[_<sheet>].csv
        total_row: true            # keep the sheet's total row
        dirty: false               # true: duplicate row, blank line, odd number/date formats
        seed: 0                    # which dirt goes where
    notes: all                     # or a list of note ids / {note, name} (default name:
                                   #   notes/<slug of title>.md)
    code:
      - csv: expenses.csv          # a csv entry's name (as written above, without folder)
        column: Amount             # default: the sheet's total column
        name: compute_total.py
        bug: random                # null | random | skips_first_row | counts_total_row |
        seed: 0                    #   truncates_cents
    extra: {"README.txt": "text"}  # literal text files

Byte determinism: the same world and spec give the same bytes for every format (fixed zip
entry dates and core properties in xlsx/pptx/docx, reportlab invariant mode with the world's
clock for pdf, pdftoppm without time chunks for png, pure functions for csv/md/txt/py), given
the same library, zlib, poppler and font versions.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from guiforge.preparers.file_code import Bug, CodeInfo, sum_script
from guiforge.preparers.file_common import FileFormatError
from guiforge.preparers.file_docx import document_docx
from guiforge.preparers.file_image import document_png
from guiforge.preparers.file_pdf import document_pdf
from guiforge.preparers.file_plain import (
    CsvDirt,
    document_text,
    find_sheet,
    note_markdown,
    sheet_csv,
)
from guiforge.preparers.file_pptx import document_pptx
from guiforge.preparers.file_read import FileReadError, read_file_text
from guiforge.preparers.file_scan import look_png
from guiforge.preparers.file_xlsx import document_xlsx, recalculate_xlsx
from guiforge.preparers.image_looks import resolve_look
from guiforge.worlds.formats import slug
from guiforge.worlds.model import Document, World

__all__ = [
    "FORMATS",
    "FileFormatError",
    "FileInfo",
    "FileReadError",
    "IMAGE_FORMATS",
    "Workspace",
    "WorkspaceSpec",
    "build_workspace",
    "parse_spec",
    "prepare_workspace",
    "read_file_text",
    "recalculate_xlsx",
    "render_document",
]

Format = Literal["xlsx", "pptx", "docx", "pdf", "md", "txt", "csv", "png"]
FORMATS: dict[str, set[str]] = {
    "spreadsheet": {"xlsx", "csv", "docx", "pdf", "md", "txt"},
    "invoice": {"xlsx", "docx", "pdf", "md", "txt"},
    "receipt": {"xlsx", "docx", "pdf", "md", "txt"},
    "form": {"xlsx", "docx", "pdf", "md", "txt"},
    "slides": {"pptx", "docx", "pdf", "md", "txt"},
    "text": {"docx", "pdf", "md", "txt"},
    "itinerary": {"docx", "pdf", "md", "txt"},
}
# Images of documents (a scan): read back by OCR, so only approximately (an accent or a
# currency sign may not survive), hence apart from FORMATS, whose files state every fact.
IMAGE_FORMATS: dict[str, set[str]] = {"invoice": {"png"}, "receipt": {"png"}, "itinerary": {"png"}}
_PATH = re.compile(r"^[A-Za-z0-9_.() -]+(/[A-Za-z0-9_.() -]+)*$")


def _check_path(name: str) -> str:
    parts = name.split("/")
    if not _PATH.match(name) or any(p in ("", ".", "..") for p in parts):
        raise ValueError(
            f"path {name!r} must be relative, without '..', of letters, digits, "
            "'_', '.', '-', '(', ')', spaces and '/'"
        )
    return name


PathName = Annotated[str, AfterValidator(_check_path)]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Figure(_Spec):
    document: str
    sheet: str | None = None
    chart: bool = True


class DocumentFile(_Spec):
    document: str
    format: Format | None = None
    name: PathName | None = None
    formulas: bool = True
    figures: list[Figure] = Field(default_factory=list)
    # png only: clean | scan | photo | auto (the task's wording) or the look's parameters
    look: str | dict[str, Any] | None = None


class CsvFile(_Spec):
    document: str
    sheet: str | None = None
    name: PathName | None = None
    total_row: bool = True
    dirty: bool = False
    seed: int = 0


class NoteFile(_Spec):
    note: str
    name: PathName | None = None


class CodeFile(_Spec):
    kind: Literal["sum_csv"] = "sum_csv"
    csv: str
    column: str | None = None
    name: PathName = "compute_total.py"
    bug: Bug | Literal["random"] | None = None
    seed: int = 0


class WorkspaceSpec(_Spec):
    folder: str = ""
    documents: Literal["all"] | list[DocumentFile] = Field(default_factory=list)
    csv: list[CsvFile] = Field(default_factory=list)
    notes: Literal["all"] | list[NoteFile] = Field(default_factory=list)
    code: list[CodeFile] = Field(default_factory=list)
    extra: dict[PathName, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        # "exp_claim" in documents/notes means {document|note: "exp_claim"}
        if isinstance(data, dict):
            data = dict(data)
            for key, idkey in (("documents", "document"), ("notes", "note")):
                if isinstance(data.get(key), list):
                    data[key] = [{idkey: x} if isinstance(x, str) else x for x in data[key]]
        return data

    @field_validator("folder")
    @classmethod
    def _folder(cls, v: str) -> str:
        return _check_path(v.strip("/")) if v.strip("/") else ""


class FileInfo(BaseModel):
    source: str  # doc:<id> | csv:<id>/<sheet> | note:<id> | code:<kind> | extra
    format: str
    dirt: list[CsvDirt] = Field(default_factory=list)
    code: CodeInfo | None = None
    look: dict[str, Any] | None = None  # png: the look applied (kind, seed, parameters)


@dataclass
class Workspace:
    files: dict[str, bytes] = field(default_factory=dict)
    manifest: dict[str, FileInfo] = field(default_factory=dict)

    def add(self, name: str, data: bytes, info: FileInfo, where: str) -> None:
        if name in self.files:
            raise ValueError(
                f"workspace spec {where}: a second file named {name!r}; "
                "give one of them another name"
            )
        self.files[name] = data
        self.manifest[name] = info


def native_format(doc: Document) -> str:
    return posixpath.splitext(doc.filename)[1].lstrip(".").lower()


def render_document(
    world: World, document_id: str, fmt: str | None = None, formulas: bool = True
) -> tuple[str, bytes]:
    """(filename, bytes) of one document; ``fmt`` defaults to its filename's extension."""
    doc = world.document(document_id)
    fmt = (fmt or native_format(doc)).lower().lstrip(".")
    name = posixpath.splitext(doc.filename)[0] + "." + fmt
    return name, _render(world, doc, fmt, formulas=formulas)


def _render(
    world: World,
    doc: Document,
    fmt: str,
    formulas: bool = True,
    figures: list[Figure] | None = None,
) -> bytes:
    allowed = FORMATS[doc.kind] | IMAGE_FORMATS.get(doc.kind, set())
    if fmt not in allowed:
        raise FileFormatError(
            f"document {doc.document_id} ({doc.kind}) cannot be written as "
            f"{fmt}; use one of {', '.join(sorted(allowed))}"
        )
    if fmt == "xlsx":
        return document_xlsx(world, doc, formulas=formulas)
    if fmt == "pptx":
        figs = [
            (src := world.document(f.document), find_sheet(src, f.sheet), f.chart)
            for f in figures or []
        ]
        return document_pptx(world, doc, figs)
    if fmt == "csv":
        return sheet_csv(world, doc)[0]  # the first sheet, clean (csv entries do the rest)
    if fmt == "docx":
        return document_docx(world, doc)
    if fmt == "pdf":
        return document_pdf(world, doc)
    if fmt == "png":
        return document_png(world, doc)
    return document_text(world, doc, markdown=fmt == "md")


def prepare_workspace(world: World, spec: WorkspaceSpec | dict[str, Any]) -> dict[str, bytes]:
    return build_workspace(world, spec).files


def parse_spec(spec: WorkspaceSpec | dict[str, Any]) -> WorkspaceSpec:
    """The validated spec; a bad one raises ValueError with one line naming the field."""
    if isinstance(spec, WorkspaceSpec):
        return spec
    try:
        return WorkspaceSpec.model_validate(spec)
    except ValidationError as e:
        # a union (e.g. "all" | list) reports every branch: the deepest location is the real one
        err = max(e.errors(), key=lambda x: len(x["loc"]))
        where = ".".join(str(p) for p in err["loc"] if not str(p).startswith(("literal[", "list[")))
        raise ValueError(f"workspace spec {where}: {err['msg']}") from None


def build_workspace(world: World, spec: WorkspaceSpec | dict[str, Any]) -> Workspace:
    spec = parse_spec(spec)
    ws = Workspace()
    at = (lambda name: f"{spec.folder}/{name}") if spec.folder else (lambda name: name)
    entries = _all_documents(world) if spec.documents == "all" else spec.documents
    for i, e in enumerate(entries):
        where = f"documents[{i}] ({e.document})"
        doc = _lookup(world.document, e.document, where)
        fmt = e.format or native_format(doc)
        name = e.name or posixpath.splitext(doc.filename)[0] + "." + fmt
        if e.look is not None and fmt != "png":
            raise ValueError(f"workspace spec {where}.look: only png images have a look, not {fmt}")
        try:
            data = _render(world, doc, fmt, formulas=e.formulas, figures=e.figures)
            look = resolve_look(e.look, [world.world_id, doc.document_id]) if fmt == "png" else None
            if look is not None and look.kind != "clean":
                data = look_png(world, doc, look)
        except (FileFormatError, KeyError, ValueError) as err:
            raise ValueError(f"workspace spec {where}: {err}") from None
        info = FileInfo(source=f"doc:{doc.document_id}", format=fmt,
                        look=look.model_dump(mode="json") if look is not None else None)
        ws.add(at(name), data, info, where)
    csv_sheets: dict[str, tuple[Document, str, bool]] = {}
    for i, c in enumerate(spec.csv):
        where = f"csv[{i}] ({c.document})"
        doc = _lookup(world.document, c.document, where)
        try:
            sheet = find_sheet(doc, c.sheet)
        except ValueError as err:
            raise ValueError(f"workspace spec {where}: {err}") from None
        stem = posixpath.splitext(doc.filename)[0]
        name = c.name or (
            f"{stem}.csv" if len(doc.sheets) == 1 else f"{stem}_{slug(sheet.name, '_')}.csv"
        )
        data, dirt = sheet_csv(world, doc, sheet.name, c.total_row, c.dirty, c.seed)
        info = FileInfo(source=f"csv:{doc.document_id}/{sheet.name}", format="csv", dirt=dirt)
        ws.add(at(name), data, info, where)
        csv_sheets[name] = (doc, sheet.name, c.total_row)
    notes = world.notes if spec.notes == "all" else None
    note_entries = [NoteFile(note=n.note_id) for n in notes] if notes is not None else spec.notes
    by_id = {n.note_id: n for n in world.notes}
    for i, n in enumerate(note_entries):  # type: ignore[arg-type]
        note = by_id.get(n.note)
        if note is None:
            raise ValueError(
                f"workspace spec notes[{i}]: world {world.world_id} has no note "
                f"{n.note!r} (have: {', '.join(by_id) or 'none'})"
            )
        name = n.name or f"notes/{slug(note.title, '_')}.md"
        ws.add(
            at(name),
            note_markdown(note),
            FileInfo(source=f"note:{note.note_id}", format="md"),
            f"notes[{i}]",
        )
    for i, c in enumerate(spec.code):
        where = f"code[{i}] ({c.name})"
        if c.csv not in csv_sheets:
            raise ValueError(
                f"workspace spec {where}: csv {c.csv!r} is not a csv entry of this "
                f"spec (have: {', '.join(csv_sheets) or 'none'})"
            )
        doc, sheet_name, total_row = csv_sheets[c.csv]
        sheet = find_sheet(doc, sheet_name)
        column = c.column or sheet.total_column
        if column is None:
            raise ValueError(
                f"workspace spec {where}: sheet {sheet.name!r} has no total column;"
                " name the column to add up"
            )
        try:
            data, code = sum_script(doc, sheet, column, c.name, c.csv, c.bug, c.seed, total_row)
        except ValueError as err:
            raise ValueError(f"workspace spec {where}: {err}") from None
        code = code.model_copy(
            update={"name": at(c.name), "csv": at(c.csv), "command": f"python3 {at(c.name)}"}
        )
        ws.add(at(c.name), data, FileInfo(source=f"code:{c.kind}", format="py", code=code), where)
    for name, text in spec.extra.items():
        ws.add(at(name), text.encode("utf-8"), FileInfo(source="extra", format="text"), "extra")
    return ws


def _all_documents(world: World) -> list[DocumentFile]:
    """Every document under its own filename; a filename two documents share gets the
    document id appended to the second, so 'all' never fails on a collision."""
    seen: set[str] = set()
    out = []
    for d in world.documents:
        name = d.filename
        if name in seen:
            stem, ext = posixpath.splitext(name)
            name = f"{stem}_{d.document_id}{ext}"
        seen.add(name)
        out.append(DocumentFile(document=d.document_id, name=name))
    return out


def _lookup(get, key: str, where: str):
    try:
        return get(key)
    except KeyError as err:
        raise ValueError(f"workspace spec {where}: {err.args[0]}") from None
