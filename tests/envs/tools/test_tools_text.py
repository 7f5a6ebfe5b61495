"""Text and file utilities on real files (plain text, .docx, .pdf)."""

from __future__ import annotations

from docx import Document
from reportlab.pdfgen import canvas
from tools_helpers import ok, run

from guiforge.envs.tools import ToolContext

NOTES = "Invoice INV-2041 paid.\nInvoice INV-2042 open.\nContact: mira@okafor-tax.example\n"


def test_list_read_write(ctx: ToolContext):
    ok(ctx, "write_file", path="notes/todo.txt", content=NOTES)
    ok(ctx, "write_file", path="notes/todo.txt", content="Call Karl.\n", append=True)
    assert ok(ctx, "list_files") == [{"path": "notes/todo.txt", "bytes": len(NOTES) + 11}]
    assert ok(ctx, "list_files", pattern="*.csv") == []
    r = ok(ctx, "read_file", path="notes/todo.txt", start_line=2, max_lines=2)
    assert r["lines"] == ["Invoice INV-2042 open.", "Contact: mira@okafor-tax.example"]
    assert (r["total_lines"], r["truncated"]) == (4, True)
    assert "no file 'todo.txt'" in run(ctx, "read_file", path="todo.txt").error


def test_read_office_and_pdf_documents(ctx: ToolContext):
    doc = Document()
    doc.add_paragraph("Lease agreement")
    doc.add_paragraph("Deposit: 2400 EUR")
    doc.save(ctx.workspace / "lease.docx")
    pdf = canvas.Canvas(str(ctx.workspace / "receipt.pdf"))
    pdf.drawString(72, 720, "Receipt total 511.70 EUR")
    pdf.save()
    assert ok(ctx, "read_file", path="lease.docx")["lines"] == ["Lease agreement", "Deposit: 2400 EUR"]
    assert "Receipt total 511.70 EUR" in "\n".join(ok(ctx, "read_file", path="receipt.pdf")["lines"])
    (ctx.workspace / "blob.bin").write_bytes(b"\x00\x01\x02")
    assert "binary file" in run(ctx, "read_file", path="blob.bin").error


def test_word_count(ctx: ToolContext):
    (ctx.workspace / "essay.md").write_text(NOTES)
    assert ok(ctx, "word_count", path="essay.md") == {"lines": 3, "words": 8, "characters": len(NOTES)}
    assert ok(ctx, "word_count", text="one two  three") == {"lines": 1, "words": 3, "characters": 14}
    both = run(ctx, "word_count", path="essay.md", text="x")
    assert not both.ok and "exactly one of path or text" in both.error


def test_regex_find(ctx: ToolContext):
    (ctx.workspace / "notes.txt").write_text(NOTES)
    hits = ok(ctx, "regex_find", pattern=r"INV-(\d+)", path="notes.txt")
    assert [(h["line"], h["text"], h["groups"]) for h in hits] == [
        (1, "INV-2041", ["2041"]), (2, "INV-2042", ["2042"])]
    assert ok(ctx, "regex_find", pattern=r"[\w.]+@[\w.-]+", path="notes.txt")[0]["line"] == 3
    assert len(ok(ctx, "regex_find", pattern="invoice", text=NOTES, ignore_case=True, max_matches=1)) == 1
    assert "bad regular expression" in run(ctx, "regex_find", pattern="(", text="x").error


def test_catastrophic_pattern_times_out_as_an_error(ctx: ToolContext):
    r = run(ctx, "regex_find", pattern=r"(a|aa)+$", text="a" * 40 + "b")  # 2^40 steps without the deadline
    assert not r.ok and "simplify it" in r.error


def test_replace_in_file(ctx: ToolContext):
    (ctx.workspace / "letter.txt").write_text("Dear Karl,\nKarl's flat. karl\n")
    r = ok(ctx, "replace_in_file", path="letter.txt", find="Karl", replacement="Mr. Brandt \\o/")
    assert r["replacements"] == 2
    assert (ctx.workspace / "letter.txt").read_text() == "Dear Mr. Brandt \\o/,\nMr. Brandt \\o/'s flat. karl\n"
    r = ok(ctx, "replace_in_file", path="letter.txt", find=r"(\w+)$", replacement=r"[\1]", use_regex=True)
    assert r["replacements"] == 1 and (ctx.workspace / "letter.txt").read_text().endswith("[karl]\n")


def test_diff_files(ctx: ToolContext):
    (ctx.workspace / "v1.txt").write_text("a\nb\nc\n")
    (ctx.workspace / "v2.txt").write_text("a\nB\nc\nd\n")
    d = ok(ctx, "diff_files", a="v1.txt", b="v2.txt", context=0)
    assert (d["identical"], d["added"], d["removed"]) == (False, 2, 1)
    assert "-b\n+B" in d["unified"] and d["unified"].startswith("--- v1.txt\n+++ v2.txt")
    assert ok(ctx, "diff_files", a="v1.txt", b="v1.txt")["identical"] is True


def test_list_files_stays_inside_the_workspace(ctx: ToolContext):
    (ctx.workspace.parent / "secret.txt").write_text("outside")
    (ctx.workspace / "link.txt").symlink_to(ctx.workspace.parent / "secret.txt")
    (ctx.workspace / "real.txt").write_text("in")
    assert [f["path"] for f in ok(ctx, "list_files")] == ["real.txt"]
    escape = run(ctx, "list_files", pattern="../*")
    assert not escape.ok and "file names only" in escape.error
    assert "outside the workspace" in run(ctx, "read_file", path="link.txt").error
