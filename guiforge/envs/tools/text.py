"""Text and file utilities over the workspace: list, read (plain text, .docx, .pptx, .pdf),
write, count, regex search and replace, diff.

Patterns run under the ``regex`` module's timeout: a catastrophic pattern from the agent
is its error, not a hung environment.
"""

from __future__ import annotations

import difflib
import subprocess
from pathlib import Path
from typing import Annotated

import regex
from pydantic import BaseModel, Field

from guiforge.envs.tools.context import ToolContext
from guiforge.envs.tools.registry import ToolError, tool

MAX_READ_BYTES = 5_000_000
REGEX_TIMEOUT_S = 2.0
Lines = Annotated[int, Field(ge=1, le=2000)]


class FileEntry(BaseModel):
    path: str
    bytes: int


class FileText(BaseModel):
    path: str
    start_line: int
    lines: list[str]
    total_lines: int
    truncated: bool


class Counts(BaseModel):
    lines: int
    words: int
    characters: int


class Match(BaseModel):
    line: int
    text: str
    groups: list[str | None]
    start: int
    end: int


class Diff(BaseModel):
    identical: bool
    added: int
    removed: int
    unified: str


class Written(BaseModel):
    path: str
    bytes: int
    replacements: int | None = None


def document_text(ctx: ToolContext, path: str) -> str:
    """The text of a workspace file; office documents and PDFs are converted to plain text."""
    full = ctx.path(path)
    if full.is_dir():
        raise ToolError(f"{path!r} is a folder; list_files shows its content")
    if full.stat().st_size > MAX_READ_BYTES:
        raise ToolError(f"{path!r} is over {MAX_READ_BYTES // 1_000_000} MB; read it with coding_tool")
    suffix = full.suffix.lower()
    if suffix in (".docx", ".pptx"):
        # headings, paragraphs and table cells in body order; slides with tables, chart values, notes
        from guiforge.preparers.file_read import FileReadError, read_file_text

        try:
            return read_file_text(full.name, full.read_bytes())
        except FileReadError as e:
            raise ToolError(str(e)) from None
    if suffix == ".pdf":
        return _pdf_text(full)
    if suffix in (".xlsx", ".xlsm", ".png", ".jpg", ".jpeg", ".gif", ".webp"):
        tool_name = "read_table" if suffix.startswith(".xls") else "ocr_image"
        raise ToolError(f"{path!r} is not a text file; use {tool_name}")
    data = full.read_bytes()
    if b"\x00" in data[:4096]:
        raise ToolError(f"{path!r} is a binary file; coding_tool can inspect it")
    return data.decode("utf-8", errors="replace")


def _pdf_text(full: Path) -> str:
    try:
        proc = subprocess.run(["pdftotext", "-layout", str(full), "-"], capture_output=True,
                              text=True, timeout=30, check=False, start_new_session=True)
    except FileNotFoundError:
        raise ToolError("pdftotext is not installed (apt-get install poppler-utils)") from None
    if proc.returncode != 0:
        raise ToolError(f"cannot read {full.name} as PDF: {proc.stderr.strip()[:200]}")
    return proc.stdout


def _source(ctx: ToolContext, path: str | None, text: str | None) -> str:
    if (path is None) == (text is None):
        raise ToolError("give exactly one of path or text")
    return document_text(ctx, path) if path is not None else text or ""


def _compile(pattern: str, ignore_case: bool) -> regex.Pattern:
    try:
        return regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
    except regex.error as exc:
        raise ToolError(f"bad regular expression {pattern!r}: {exc}") from None


@tool("text")
def list_files(ctx: ToolContext, directory: str = ".", pattern: str = "*") -> list[FileEntry]:
    """List the files in the workspace (or a folder of it), recursively, with their sizes.

    Args:
        directory: folder relative to the workspace
        pattern: glob on file names, e.g. *.csv
    """
    root = ctx.path(directory)
    if not root.is_dir():
        raise ToolError(f"{directory!r} is not a folder")
    if "/" in pattern or "\\" in pattern or ".." in pattern:
        raise ToolError(f"pattern {pattern!r} must match file names only, e.g. *.csv; use directory for folders")
    # symlinks are skipped: one made by coding_tool may point outside the workspace
    files = sorted(p for p in root.rglob(pattern) if p.is_file() and not p.is_symlink())
    return [FileEntry(path=ctx.relative(p), bytes=p.stat().st_size) for p in files[:500]]


@tool("text")
def read_file(ctx: ToolContext, path: str, start_line: Annotated[int, Field(ge=1)] = 1,
              max_lines: Lines = 200) -> FileText:
    """Read the contents of a file: its text lines (.txt, .md, .csv, .json...; also the text
    of .docx, .pptx and .pdf documents).

    Args:
        path: file relative to the workspace
        start_line: first line to return, 1-based
        max_lines: how many lines at most
    """
    lines = document_text(ctx, path).splitlines()
    shown = lines[start_line - 1 : start_line - 1 + max_lines]
    return FileText(path=path, start_line=start_line, lines=shown, total_lines=len(lines),
                    truncated=start_line - 1 + max_lines < len(lines))


@tool("text")
def write_file(ctx: ToolContext, path: str, content: str, append: bool = False) -> Written:
    """Create, overwrite or append to a text file in the workspace (save notes, reports).

    Args:
        path: file relative to the workspace; folders are created
        content: the text to write
        append: add to the end instead of replacing the file
    """
    target = ctx.path(path, must_exist=False)
    if target.is_dir():
        raise ToolError(f"{path!r} is a folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a" if append else "w", encoding="utf-8") as f:
        f.write(content)
    return Written(path=ctx.relative(target), bytes=target.stat().st_size)


@tool("text")
def word_count(ctx: ToolContext, path: str | None = None, text: str | None = None) -> Counts:
    """Count lines, words and characters of a file or a piece of text.

    Args:
        path: file relative to the workspace
        text: literal text, instead of path
    """
    content = _source(ctx, path, text)
    return Counts(lines=len(content.splitlines()), words=len(content.split()),
                  characters=len(content))


@tool("text")
def regex_find(ctx: ToolContext, pattern: str, path: str | None = None, text: str | None = None,
               ignore_case: bool = False, max_matches: Lines = 100) -> list[Match]:
    """Search a file or text with a regular expression (grep): every match with its line
    number and capture groups.

    Args:
        pattern: Python regular expression, e.g. INV-\\d+
        path: file relative to the workspace
        text: literal text, instead of path
        ignore_case: match regardless of case
        max_matches: stop after this many matches
    """
    content = _source(ctx, path, text)
    compiled = _compile(pattern, ignore_case)
    starts = [0] + [i + 1 for i, ch in enumerate(content) if ch == "\n"]
    out: list[Match] = []
    try:
        for m in compiled.finditer(content, timeout=REGEX_TIMEOUT_S):
            line = _line_of(starts, m.start())
            out.append(Match(line=line, text=m.group(0), groups=list(m.groups()),
                             start=m.start(), end=m.end()))
            if len(out) >= max_matches:
                break
    except TimeoutError:
        raise ToolError(f"pattern {pattern!r} ran past {REGEX_TIMEOUT_S:.0f}s; simplify it") from None
    return out


def _line_of(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts)
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid
    return lo + 1


@tool("text")
def replace_in_file(ctx: ToolContext, path: str, find: str, replacement: str,
                    use_regex: bool = False, ignore_case: bool = False) -> Written:
    """Find and replace text in a workspace file (literal text, or a regular expression with
    \\1 style back-references).

    Args:
        path: text file relative to the workspace
        find: the text or pattern to replace
        replacement: the new text
        use_regex: treat find as a regular expression
        ignore_case: match regardless of case
    """
    if ctx.path(path).suffix.lower() in (".docx", ".pptx", ".pdf"):
        raise ToolError(f"{path!r} is not a plain text file; edit it with coding_tool")
    content = document_text(ctx, path)
    compiled = _compile(find if use_regex else regex.escape(find), ignore_case)
    try:
        new, count = compiled.subn(replacement if use_regex else (lambda _m: replacement),
                                   content, timeout=REGEX_TIMEOUT_S)
    except TimeoutError:
        raise ToolError(f"pattern {find!r} ran past {REGEX_TIMEOUT_S:.0f}s; simplify it") from None
    except regex.error as exc:
        raise ToolError(f"bad replacement {replacement!r}: {exc}") from None
    target = ctx.path(path)
    target.write_text(new, encoding="utf-8")
    return Written(path=ctx.relative(target), bytes=target.stat().st_size, replacements=count)


@tool("text")
def diff_files(ctx: ToolContext, a: str, b: str, context: Annotated[int, Field(ge=0, le=20)] = 3) -> Diff:
    """Compare two files line by line (what changed between versions) as a unified diff with
    counts of added and removed lines.

    Args:
        a: the old file relative to the workspace
        b: the new file relative to the workspace
        context: unchanged lines shown around each change
    """
    old, new = document_text(ctx, a).splitlines(), document_text(ctx, b).splitlines()
    lines = list(difflib.unified_diff(old, new, fromfile=a, tofile=b, n=context, lineterm=""))
    added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
    removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
    text = "\n".join(lines)
    return Diff(identical=not lines, added=added, removed=removed,
                unified=text if len(text) <= 20_000 else text[:20_000] + "\n... (truncated)")
