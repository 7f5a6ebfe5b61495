"""What every file writer shares: the world's fixed clock, money formatting in the world's
locale, the parties of a document, cell typing, and OOXML package normalisation (fixed zip
entry dates and core-property timestamps, so the same world gives the same bytes)."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time

from guiforge.worlds.formats import format_money, format_number
from guiforge.worlds.model import Document, Sheet, World
from guiforge.worlds.seeds import LocaleInfo, locale_info

ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
CLOCK = re.compile(r"^\d{2}:\d{2}$")
# column names that hold money when the document has a currency ("Day rate", "Quote total")
MONEY_COLUMN = re.compile(
    r"\b(amount|cost|price|total|value|takings|rate|fee|materials|disposal|hire|catering|av|"
    r"budget|income|sales|spend|rent|deposit|salary|paid|due|balance|subtotal|tax|vat)\b",
    re.IGNORECASE,
)


class FileFormatError(ValueError):
    """A document cannot be written in the requested format (the message says which fit)."""


def world_clock(world: World) -> datetime:
    """The fixed 'now' every file of this world is stamped with: its base date, 09:00."""
    return datetime.combine(world.base_date, time(9, 0))


def locale_of(world: World) -> LocaleInfo:
    return locale_info(world.me.locale)


def money(world: World, value: float) -> str:
    return format_money(float(value), locale_of(world))


def plain_number(value: float | int) -> str:
    """The shortest exact text of a number: 3.0 -> '3', 725.02 -> '725.02' (no float dust)."""
    v = float(value)
    if v.is_integer():
        return str(int(v))
    return f"{v:.6f}".rstrip("0").rstrip(".")


def quantity_text(world: World, value: float) -> str:
    v = float(value)
    return format_number(v, 0 if v.is_integer() else 2, locale_of(world))


def money_format_code(world: World) -> str:
    """A spreadsheet number format showing the world's currency symbol on the right side."""
    loc = locale_of(world)
    sym = loc.symbol.replace('"', "")
    return f'#,##0.00 "{sym}"' if loc.symbol_after else f'"{sym}"#,##0.00'


@dataclass(frozen=True)
class Party:
    name: str
    organization: str = ""
    email: str = ""
    phone: str = ""
    address: str = ""

    def lines(self) -> list[str]:
        out = [self.name]
        if self.organization and self.organization != self.name:
            out.append(self.organization)
        return out + [x for x in (self.address, self.email, self.phone) if x]


def _me(world: World) -> Party:
    me = world.me
    org = "" if me.employer == "Self-employed" else me.employer
    return Party(me.name, org, me.email, me.phone, f"{me.city}, {me.country}")


def issuer(world: World, doc: Document) -> Party:
    if doc.author in ("", "me"):
        return _me(world)
    c = world.contact(doc.author)
    return Party(c.name, c.organization, c.email, c.phone)


def recipient(world: World, doc: Document) -> Party | None:
    """Whom a document is addressed to: the persona when a contact wrote it; when the persona
    wrote it, the contact named by a 'Bill to'/'Customer'-style field (or the field text)."""
    if doc.author not in ("", "me"):
        return _me(world)
    for key in ("Bill to", "Customer", "Client", "To"):
        name = doc.fields.get(key, "").strip()
        if not name:
            continue
        for c in world.contacts:
            if name in (c.organization, c.name):
                return Party(
                    c.organization or c.name, c.name if c.organization else "", c.email, c.phone
                )
        return Party(name)
    return None


def is_money_column(doc: Document, sheet: Sheet, col: int) -> bool:
    if not doc.currency or not MONEY_COLUMN.search(sheet.columns[col]):
        return False
    vals = [r[col] for r in sheet.rows if r[col] is not None]
    return bool(vals) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in vals)


def typed_cell(value: object) -> object:
    """A world cell as a spreadsheet value: ISO dates become dates, 'HH:MM' becomes a time."""
    if isinstance(value, str):
        if ISO_DATE.match(value):
            try:
                return date.fromisoformat(value)
            except ValueError:
                return value
        if CLOCK.match(value):
            h, m = int(value[:2]), int(value[3:])
            if h < 24 and m < 60:
                return time(h, m)
    return value


def total_label_column(sheet: Sheet) -> int | None:
    """The column whose total-row cell holds the label ('Total'), if any."""
    if not sheet.total_column or not sheet.rows:
        return None
    last = sheet.rows[-1]
    return next((i for i, v in enumerate(last) if isinstance(v, str)), None)


# -- OOXML packages -------------------------------------------------------------------------
_CORE_TIME = re.compile(rb"(<dcterms:(?:created|modified)\b[^>]*>)[^<]*(</dcterms:)")


def normalize_package(
    data: bytes,
    when: datetime,
    patches: dict[str, Callable[[bytes], bytes]] | None = None,
    core_times: bool = True,
) -> bytes:
    """Rewrite a zip package with fixed entry dates and (``core_times``) fixed core-property
    created/modified times, applying ``patches`` (member name -> new bytes) on the way;
    nested packages (a chart's embedded workbook) are normalised too. zlib at a fixed level
    is deterministic for one zlib build."""
    stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info)
            if patches and info.filename in patches:
                body = patches[info.filename](body)
            if core_times and info.filename == "docProps/core.xml":
                body = _CORE_TIME.sub(rb"\g<1>" + stamp + rb"\g<2>", body)
            elif info.filename.endswith((".xlsx", ".docx", ".pptx")) and body[:2] == b"PK":
                body = normalize_package(body, when, core_times=core_times)
            entry = zipfile.ZipInfo(info.filename, date_time=when.timetuple()[:6])
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            dst.writestr(entry, body, compresslevel=6)
    return out.getvalue()
