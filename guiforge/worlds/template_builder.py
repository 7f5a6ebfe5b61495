"""The offline world builder: a persona plus a scenario template plus a seed give one World,
deterministically. Totals, line amounts and sourced facts are computed here, never typed by
the template, and the result must pass the consistency check."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

from guiforge.worlds.background import with_background
from guiforge.worlds.build_docs import build_sections, build_slides, texts
from guiforge.worlds.consistency import check_world
from guiforge.worlds.dsl import DocumentSpec, Scenario, SheetSpec
from guiforge.worlds.formats import company_domain, slug, unique_email
from guiforge.worlds.generators import eval_vars
from guiforge.worlds.model import (
    Chat,
    ChatMessage,
    Contact,
    Document,
    Email,
    Event,
    Fact,
    LineItem,
    Note,
    Persona,
    Sheet,
    Transaction,
    World,
)
from guiforge.worlds.runtime import Run
from guiforge.worlds.seeds import locale_info
from guiforge.worlds.sources import SourceError, cents, resolve
from guiforge.yamlfile import PathKey

MONEY_KINDS = ("invoice", "receipt", "spreadsheet")
PAIRING_RULES = {"occupation_scenario", "self_employed_manager"}


def build_world(persona: Persona, scenario: Scenario, seed: int, background: bool = True) -> World:
    """Build the world of ``scenario`` for ``persona``; the same inputs give the same world.
    ``background`` adds the persona's everyday life around it (worlds/background.py)."""
    return _Builder(Run(persona, scenario, seed)).build(background)


class _Builder:
    def __init__(self, run: Run):
        self.run = run
        self.contacts: list[Contact] = []
        self.events: list[Event] = []
        self.documents: list[Document] = []
        self.transactions: list[Transaction] = []
        self.facts: list[Fact] = []
        self.view = SimpleNamespace(
            documents=self.documents,
            events=self.events,
            contacts=self.contacts,
            transactions=self.transactions,
        )

    def build(self, background: bool = True) -> World:
        run, sc = self.run, self.run.scenario
        eval_vars(run)
        self._people()
        self._events()
        self._documents()
        self._transactions()
        self._facts()
        emails = self._emails()
        chats = self._chats()
        notes = self._notes()
        try:
            world = World(
                world_id=run.world_id,
                persona_id=run.persona.persona_id,
                scenario=sc.id,
                title=run.text(sc.title, ("title",)),
                summary=run.text(sc.summary, ("summary",)),
                base_date=run.base_date,
                currency=run.loc.currency,
                me=run.persona,
                contacts=self.contacts,
                events=sorted(self.events, key=lambda e: e.start),
                facts=self.facts,
                documents=self.documents,
                emails=sorted(emails, key=lambda e: e.sent_at),
                chats=chats,
                notes=notes,
                transactions=sorted(self.transactions, key=lambda t: t.booked_on),
            )
        except ValueError as e:  # pydantic: a duplicate id from an `each`, a bad filename, ...
            raise run.error((), f"the built world is invalid: {_first_line(e)}") from None
        if background:
            world = with_background(world)
        # who gets which scenario is the caller's choice; the stage checks the pairing
        problems = [p for p in check_world(world) if p.code not in PAIRING_RULES]
        if problems:
            raise run.error((), f"the built world fails its consistency check: {problems[0]}")
        return world

    # -- people ---------------------------------------------------------------------------
    def _people(self) -> None:
        run = self.run
        me = run.persona
        taken = {me.email.lower()}
        my_domain = me.email.split("@", 1)[1]
        for role, spec in run.scenario.people.items():
            path: PathKey = ("people", role)
            locale = run.text(spec.locale, (*path, "locale")) if spec.locale else me.locale
            fk = run.faker(locale, path)
            gender = run.text(spec.gender, (*path, "gender")).strip().lower() if spec.gender else ""
            if gender not in ("", "female", "male"):
                raise run.error((*path, "gender"), f"gender {gender!r} must be 'female' or 'male'")
            pick = {"female": fk.first_name_female, "male": fk.first_name_male}.get(
                gender, fk.first_name
            )
            first = run.text(spec.first_name, (*path, "first_name")) if spec.first_name else pick()
            last = (
                run.text(spec.last_name, (*path, "last_name")) if spec.last_name else fk.last_name()
            )
            org = run.text(spec.organization, (*path, "organization"))
            if spec.email_domain == "free" or not org:
                domain = fk.free_email_domain()
            elif org == me.employer:
                domain = my_domain  # colleagues share the persona's work domain
            else:
                domain = company_domain(org, run.loc.tld if locale == me.locale else _tld(locale))
            email = unique_email(f"{slug(first, '.')}.{slug(last, '.')}", domain, taken)
            c = Contact(
                contact_id=f"c_{role}",
                name=f"{first} {last}",
                email=email,
                phone=fk.phone_number(),
                role=run.text(spec.role, (*path, "role")) if spec.role else role.replace("_", " "),
                organization=org,
                relation=run.text(spec.relation, (*path, "relation")),
            )
            self.contacts.append(c)
            run.ctx["people"][role] = {
                **c.model_dump(),
                "id": c.contact_id,
                "first_name": first,
                "last_name": last,
            }

    def _role(self, role: str, path: PathKey, ctx: dict[str, Any] | None) -> str:
        role = self.run.text(role, path, ctx)  # roles may be templates, e.g. in an `each`
        if role != "me" and role not in self.run.scenario.people:
            raise self.run.error(path, f"unknown role {role!r}")
        return role

    def _contact_id(self, role: str, path: PathKey, ctx: dict[str, Any] | None = None) -> str:
        role = self._role(role, path, ctx)
        if role == "me":
            raise self.run.error(path, "'me' is implied here; list other roles only")
        return f"c_{role}"

    def _address(self, role: str, path: PathKey, ctx: dict[str, Any]) -> str:
        role = self._role(role, path, ctx)
        return self.run.persona.email if role == "me" else self.run.ctx["people"][role]["email"]

    # -- events ---------------------------------------------------------------------------
    def _events(self) -> None:
        run = self.run
        for n, spec in enumerate(run.scenario.events):
            path: PathKey = ("events", n)
            for ctx in run.expand(spec, path, run.ctx):
                start = run.moment(spec.start, (*path, "start"), ctx, step=15)
                if spec.end is not None:
                    end = run.moment(spec.end, (*path, "end"), ctx, step=15)
                else:
                    m = spec.minutes or 60
                    if isinstance(m, str):
                        m = int(run.number(m, (*path, "minutes"), ctx))
                    end = start + timedelta(
                        minutes=m if isinstance(m, int) else run.rng.randrange(m[0], m[1] + 1, 5)
                    )
                self.events.append(
                    Event(
                        event_id=run.text(spec.id, (*path, "id"), ctx),
                        title=run.text(spec.title, (*path, "title"), ctx),
                        start=start,
                        end=end,
                        location=run.text(spec.location, (*path, "location"), ctx),
                        attendees=[
                            self._contact_id(r, (*path, "attendees"), ctx) for r in spec.attendees
                        ],
                        description=run.text(spec.description, (*path, "description"), ctx),
                    )
                )

    # -- documents ------------------------------------------------------------------------
    def _documents(self) -> None:
        run = self.run
        for n, spec in enumerate(run.scenario.documents):
            for ctx in run.expand(spec, ("documents", n), run.ctx):
                doc = self._document(spec, ("documents", n), ctx)
                self.documents.append(doc)
                run.ctx["docs"][doc.document_id] = doc

    def _document(self, spec: DocumentSpec, path: PathKey, ctx: dict[str, Any]) -> Document:
        run = self.run
        items: list[LineItem] = []
        for j, li in enumerate(spec.line_items):
            p = (*path, "line_items", j)
            for lctx in run.expand(li, p, ctx):
                q = run.number(li.quantity, (*p, "quantity"), lctx)
                price = cents(run.number(li.unit_price, (*p, "unit_price"), lctx))
                amount = cents(Decimal(str(q)) * Decimal(str(price)))
                desc = run.text(li.description, (*p, "description"), lctx)
                items.append(
                    LineItem(description=desc, quantity=q, unit_price=price, amount=amount)
                )
        tax_rate = run.number(spec.tax_rate, (*path, "tax_rate"), ctx)
        total = None
        if items:
            sub = sum(Decimal(str(i.amount)) for i in items)
            total = cents(sub + Decimal(str(cents(sub * Decimal(str(tax_rate))))))
        author = self._role(spec.author, (*path, "author"), ctx)
        author = "me" if author == "me" else f"c_{author}"
        try:
            return Document(
                document_id=run.text(spec.id, (*path, "id"), ctx),
                kind=spec.kind,
                title=run.text(spec.title, (*path, "title"), ctx),
                filename=run.text(spec.filename, (*path, "filename"), ctx),
                author=author,
                currency=run.loc.currency if spec.kind in MONEY_KINDS or items else "",
                line_items=items,
                tax_rate=tax_rate,
                total=total,
                sheets=[
                    self._sheet(s, (*path, "sheets", k), ctx) for k, s in enumerate(spec.sheets)
                ],
                slides=build_slides(run, spec.slides, (*path, "slides"), ctx),
                paragraphs=texts(run, spec.paragraphs, (*path, "paragraphs"), ctx),
                sections=build_sections(run, spec.sections, (*path, "sections"), ctx),
                fields={k: run.text(v, (*path, "fields", k), ctx) for k, v in spec.fields.items()},
            )
        except ValueError as e:
            raise run.error(path, f"invalid document: {_first_line(e)}") from None

    def _sheet(self, spec: SheetSpec, path: PathKey, ctx: dict[str, Any]) -> Sheet:
        run = self.run
        rows: list[list[str | float | int | None]] = []
        for j, row in enumerate(spec.rows):
            p = (*path, "rows", j)
            for rctx in run.expand(row, p, ctx):
                cells = [
                    _cell(run.native(c, (*p, "cells", k), rctx)) for k, c in enumerate(row.cells)
                ]
                if len(cells) != len(spec.columns):
                    raise run.error(p, f"{len(cells)} cells for {len(spec.columns)} columns")
                rows.append(cells)
        if spec.total:
            col = spec.columns.index(spec.total)
            total = cents(
                sum(Decimal(str(r[col])) for r in rows if isinstance(r[col], int | float))
            )
            last: list[str | float | int | None] = [None] * len(spec.columns)
            last[col] = total
            if col != 0:
                last[0] = spec.total_label
            rows.append(last)
        return Sheet(name=run.text(spec.name, (*path, "name"), ctx), columns=spec.columns, rows=rows,
                     total_column=spec.total)  # fmt: skip

    # -- money, facts -------------------------------------------------------------------
    def _transactions(self) -> None:
        run = self.run
        for n, spec in enumerate(run.scenario.transactions):
            path: PathKey = ("transactions", n)
            for ctx in run.expand(spec, path, run.ctx):
                d = run.day(spec.day, (*path, "day"), ctx)
                self.transactions.append(
                    Transaction(
                        transaction_id=run.text(spec.id, (*path, "id"), ctx),
                        booked_on=d.date() if isinstance(d, datetime) else d,
                        payee=run.text(spec.payee, (*path, "payee"), ctx),
                        amount=cents(run.number(spec.amount, (*path, "amount"), ctx)),
                        category=run.text(spec.category, (*path, "category"), ctx),
                        memo=run.text(spec.memo, (*path, "memo"), ctx),
                    )
                )

    def _facts(self) -> None:
        run = self.run
        for n, spec in enumerate(run.scenario.facts):
            path: PathKey = ("facts", n)
            for ctx in run.expand(spec, path, run.ctx):
                source = run.text(spec.source, (*path, "source"), ctx)
                if spec.value is not None:
                    raw = run.native(spec.value, (*path, "value"), ctx)
                else:
                    try:
                        raw = resolve(self.view, source)
                    except SourceError as e:
                        raise run.error((*path, "source"), str(e)) from None
                value, typed = _typed(raw, spec.kind)
                if value is None:
                    raise run.error((*path, "value"), f"{raw!r} is not a valid {spec.kind}")
                key = run.text(spec.key, (*path, "key"), ctx)
                self.facts.append(Fact(key=key, value=value, kind=spec.kind, source=source,
                                       unit=run.text(spec.unit, (*path, "unit"), ctx),
                                       description=run.text(spec.description, (*path, "description"), ctx)))  # fmt: skip
                run.ctx["facts"][key] = typed

    # -- messages -------------------------------------------------------------------------
    def _emails(self) -> list[Email]:
        run, out = self.run, []
        for n, spec in enumerate(run.scenario.emails):
            path: PathKey = ("emails", n)
            for ctx in run.expand(spec, path, run.ctx):
                from_me = self._role(spec.from_, (*path, "from"), ctx) == "me"
                out.append(
                    Email(
                        email_id=run.text(spec.id, (*path, "id"), ctx),
                        folder=spec.folder or ("sent" if from_me else "inbox"),
                        sender=self._address(spec.from_, (*path, "from"), ctx),
                        to=[self._address(r, (*path, "to"), ctx) for r in spec.to],
                        cc=[self._address(r, (*path, "cc"), ctx) for r in spec.cc],
                        subject=run.text(spec.subject, (*path, "subject"), ctx),
                        body=self._body(spec.body, (*path, "body"), ctx),
                        sent_at=run.moment(spec.at, (*path, "at"), ctx),
                        attachments=[
                            run.text(a, (*path, "attachments"), ctx) for a in spec.attachments
                        ],
                        read=spec.read
                        if spec.read is not None
                        else (from_me or run.rng.random() < 0.6),
                        cites=[run.text(c, (*path, "cites"), ctx) for c in spec.cites],
                    )
                )
        return out

    def _body(self, body: str | list, path: PathKey, ctx: dict[str, Any]) -> str:
        """The e-mail text: one string, or paragraphs with one of each paragraph's alternatives
        picked per world (people phrase the same e-mail differently)."""
        run = self.run
        if isinstance(body, str):
            return run.text(body, path, ctx).strip() + "\n"
        paragraphs = []
        for i, para in enumerate(body):
            k = run.rng.randrange(len(para)) if isinstance(para, list) else None
            src, where = (para, (*path, i)) if k is None else (para[k], (*path, i, k))
            paragraphs.append(run.text(src, where, ctx).strip())
        return "\n\n".join(p for p in paragraphs if p) + "\n"

    def _chats(self) -> list[Chat]:
        run, out = self.run, []
        for n, spec in enumerate(run.scenario.chats):
            path: PathKey = ("chats", n)
            for ctx in run.expand(spec, path, run.ctx):
                msgs = []
                for j, m in enumerate(spec.messages):
                    p = (*path, "messages", j)
                    for mctx in run.expand(m, p, ctx):
                        who = self._role(m.from_, (*p, "from"), mctx)
                        sender = "me" if who == "me" else f"c_{who}"
                        msgs.append(ChatMessage(sender=sender, text=run.text(m.text, (*p, "text"), mctx),
                                                sent_at=run.moment(m.at, (*p, "at"), mctx),
                                                cites=[run.text(c, (*p, "cites"), mctx) for c in m.cites]))  # fmt: skip
                out.append(
                    Chat(
                        chat_id=run.text(spec.id, (*path, "id"), ctx),
                        title=run.text(spec.title, (*path, "title"), ctx),
                        participants=[
                            self._contact_id(r, (*path, "participants"), ctx)
                            for r in spec.participants
                        ],
                        messages=sorted(msgs, key=lambda m: m.sent_at),
                    )
                )
        return out

    def _notes(self) -> list[Note]:
        run = self.run
        return [
            Note(
                note_id=run.text(spec.id, ("notes", n, "id"), ctx),
                title=run.text(spec.title, ("notes", n, "title"), ctx),
                body=run.text(spec.body, ("notes", n, "body"), ctx).strip() + "\n",
                cites=[run.text(c, ("notes", n, "cites"), ctx) for c in spec.cites],
            )  # fmt: skip
            for n, spec in enumerate(run.scenario.notes)
            for ctx in run.expand(spec, ("notes", n), run.ctx)
        ]


def _typed(raw: Any, kind: str) -> tuple[str | float | int | None, Any]:
    """(the value stored in the fact, the value templates see as ``facts.<key>``)."""
    if kind == "date":
        if isinstance(raw, datetime):
            raw = raw.date()
        if isinstance(raw, str):
            try:
                raw = date.fromisoformat(raw)
            except ValueError:
                return None, None
        return (raw.isoformat(), raw) if isinstance(raw, date) else (None, None)
    if kind in ("money", "number"):
        if isinstance(raw, bool):
            return None, None
        try:
            f = float(raw)
        except (TypeError, ValueError):
            return None, None
        if kind == "money":
            return cents(f), cents(f)
        v = int(f) if f == int(f) else round(f, 2)
        return v, v
    return str(raw), str(raw)


def _cell(v: Any) -> str | float | int | None:
    if isinstance(v, datetime):
        return v.strftime("%Y-%m-%d %H:%M")
    if isinstance(v, date):
        return v.isoformat()
    if v is None or isinstance(v, int | float | str) and not isinstance(v, bool):
        return v
    return str(v)


def _tld(locale: str) -> str:
    return locale_info(locale).tld


def _first_line(e: Exception) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return " ".join(lines[:3])
