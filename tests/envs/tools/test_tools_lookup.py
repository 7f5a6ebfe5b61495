"""Look-ups in the episode's world."""

from __future__ import annotations

from tools_helpers import ok, run

from guiforge.envs.tools import ToolContext


def test_summary_and_facts(ctx: ToolContext):
    s = ok(ctx, "world_summary")
    assert s["me"]["name"] == "Lena Vogel" and s["today"] == "2025-03-12"
    assert s["counts"]["contacts"] == 3 and s["counts"]["transactions"] == 3
    assert ok(ctx, "get_fact", key="deposit_amount")["value"] == 2400.0
    assert [f["key"] for f in ok(ctx, "search_facts", query="security deposit")] == ["deposit_amount"]
    assert len(ok(ctx, "search_facts")) == 2
    missing = run(ctx, "get_fact", key="rent")
    assert not missing.ok and "search_facts" in missing.error


def test_contacts(ctx: ToolContext):
    hits = ok(ctx, "find_contacts", query="landlord")
    assert [c["phone"] for c in hits] == ["+49 30 555 0101"]
    assert ok(ctx, "find_contacts", query="vogel studio")[0]["contact_id"] == "c-sam"
    assert ok(ctx, "get_contact", contact_id="c-tax")["email"] == "mira@okafor-tax.example"
    assert not run(ctx, "get_contact", contact_id="c-nobody").ok


def test_events(ctx: ToolContext):
    assert [e["event_id"] for e in ok(ctx, "upcoming_events", days=7)] == ["e-viewing"]
    assert [e["event_id"] for e in ok(ctx, "upcoming_events", days=30)] == ["e-viewing", "e-tax"]
    assert [e["event_id"] for e in ok(ctx, "list_events", start="2025-03-01", end="2025-03-31")] == [
        "e-past", "e-viewing", "e-tax"]
    assert [e["event_id"] for e in ok(ctx, "list_events", attendee="c-tax")] == ["e-tax"]
    assert ok(ctx, "list_events", query="viewing")[0]["location"] == "Kastanienallee 12"


def test_documents_emails_transactions(ctx: ToolContext):
    docs = ok(ctx, "list_documents", kind="invoice")
    assert docs == [{"document_id": "d-invoice", "kind": "invoice", "title": "Movers invoice 2025-031",
                     "filename": "movers_invoice.pdf", "currency": "EUR", "total": 511.7}]
    doc = ok(ctx, "get_document", document_id="d-invoice")
    assert [li["amount"] for li in doc["line_items"]] == [380.0, 50.0]
    mails = ok(ctx, "search_emails", query="receipts")
    assert [m["email_id"] for m in mails] == ["m-1"]
    assert [m["email_id"] for m in ok(ctx, "search_emails", folder="sent")] == ["m-2"]
    assert [m["email_id"] for m in ok(ctx, "search_emails")] == ["m-2", "m-1"]  # newest first
    groceries = ok(ctx, "list_transactions", category="Groceries")
    assert groceries["count"] == 2 and groceries["total"] == -78.0
    march = ok(ctx, "list_transactions", start="2025-03-05", end="2025-03-31")
    assert [t["transaction_id"] for t in march["transactions"]] == ["t-2", "t-3"]


def test_no_world_is_an_error_result(ctx: ToolContext):
    ctx.world = None
    r = run(ctx, "find_contacts", query="landlord")
    assert not r.ok and "has no world" in r.error
