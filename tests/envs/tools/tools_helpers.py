"""Shared helpers of the tools-domain tests: a world, tool calls, images with text."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from guiforge.envs.tools import REGISTRY, ToolContext, ToolResult, call_tool
from guiforge.worlds.model import World

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def make_world(**overrides: Any) -> World:
    data: dict[str, Any] = {
        "world_id": "w-berlin-01",
        "persona_id": "p-01",
        "scenario": "moving_flat",
        "title": "Moving to a new flat in Berlin",
        "summary": "Lena is moving flats and sorting out the paperwork.",
        "base_date": date(2025, 3, 12),  # a Wednesday
        "currency": "EUR",
        "me": {
            "persona_id": "p-01", "name": "Lena Vogel", "locale": "de_DE", "age": 34,
            "occupation": "Architect", "employer": "Vogel Studio", "city": "Berlin",
            "country": "Germany", "email": "lena@vogel.example", "phone": "+49 30 1234567",
            "traits": ["organised"], "goals": ["move flat by April"],
        },
        "contacts": [
            {"contact_id": "c-landlord", "name": "Karl Brandt", "email": "karl@brandt-immo.example",
             "phone": "+49 30 555 0101", "role": "landlord", "organization": "Brandt Immobilien",
             "relation": "vendor"},
            {"contact_id": "c-tax", "name": "Mira Okafor", "email": "mira@okafor-tax.example",
             "phone": "+49 30 555 0202", "role": "accountant", "organization": "Okafor Steuer",
             "relation": "vendor"},
            {"contact_id": "c-sam", "name": "Sam Keller", "email": "sam@vogel.example",
             "phone": "+49 30 555 0303", "role": "colleague", "organization": "Vogel Studio",
             "relation": "colleague"},
        ],
        "events": [
            {"event_id": "e-viewing", "title": "Flat viewing Prenzlauer Berg",
             "start": datetime(2025, 3, 14, 10, 0), "end": datetime(2025, 3, 14, 11, 0),
             "location": "Kastanienallee 12", "attendees": ["c-landlord"]},
            {"event_id": "e-tax", "title": "Tax return review", "start": datetime(2025, 3, 20, 15, 0),
             "end": datetime(2025, 3, 20, 16, 0), "attendees": ["c-tax"]},
            {"event_id": "e-past", "title": "Studio offsite", "start": datetime(2025, 3, 1, 9, 0),
             "end": datetime(2025, 3, 1, 17, 0), "attendees": ["c-sam"]},
        ],
        "facts": [
            {"key": "deposit_amount", "value": 2400.0, "kind": "money", "unit": "EUR",
             "description": "security deposit for the new flat", "source": "doc:d-lease.total"},
            {"key": "move_date", "value": "2025-04-01", "kind": "date", "description": "moving day"},
        ],
        "documents": [
            {"document_id": "d-invoice", "kind": "invoice", "title": "Movers invoice 2025-031",
             "filename": "movers_invoice.pdf", "author": "c-landlord", "currency": "EUR",
             "line_items": [
                 {"description": "Van and two movers", "quantity": 4, "unit_price": 95.0, "amount": 380.0},
                 {"description": "Boxes", "quantity": 20, "unit_price": 2.5, "amount": 50.0},
             ],
             "tax_rate": 0.19, "total": 511.7},
        ],
        "emails": [
            {"email_id": "m-1", "sender": "mira@okafor-tax.example", "to": ["lena@vogel.example"],
             "subject": "Documents for your tax return", "body": "Please send the moving receipts.",
             "sent_at": datetime(2025, 3, 10, 9, 30)},
            {"email_id": "m-2", "folder": "sent", "sender": "lena@vogel.example",
             "to": ["karl@brandt-immo.example"], "subject": "Viewing on Friday",
             "body": "See you at the viewing.", "sent_at": datetime(2025, 3, 11, 18, 0)},
        ],
        "transactions": [
            {"transaction_id": "t-1", "booked_on": date(2025, 3, 2), "payee": "Rewe", "amount": -54.3,
             "category": "groceries"},
            {"transaction_id": "t-2", "booked_on": date(2025, 3, 6), "payee": "Edeka", "amount": -23.7,
             "category": "groceries"},
            {"transaction_id": "t-3", "booked_on": date(2025, 3, 7), "payee": "Vogel Studio",
             "amount": 3200.0, "category": "salary"},
        ],
    }
    data.update(overrides)
    return World.model_validate(data)


def run(ctx: ToolContext, name: str, **arguments: Any) -> ToolResult:
    return call_tool(REGISTRY[name], ctx, arguments)


def ok(ctx: ToolContext, name: str, **arguments: Any) -> Any:
    result = run(ctx, name, **arguments)
    assert result.ok, result.error
    return result.value


def text_image(lines: list[str], size: tuple[int, int] = (900, 300), font_size: int = 40,
               origin: tuple[int, int] = (40, 40)) -> Image.Image:
    """A white RGB image with black printed lines: real input for tesseract."""
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(FONT, font_size)
    x, y = origin
    for line in lines:
        draw.text((x, y), line, fill="black", font=font)
        y += int(font_size * 1.6)
    return img
