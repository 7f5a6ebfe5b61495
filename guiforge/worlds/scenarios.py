"""Load scenario templates (``data/scenarios/*.yaml``) and check them before any world is
built: schema, references between roles, documents and facts, and every Jinja template's
syntax and names. Errors are one line: ``file:line: field: what is wrong``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import nodes

from guiforge.errors import ConfigError
from guiforge.worlds.dsl import Scenario
from guiforge.worlds.generators import faker_provider_ok
from guiforge.worlds.model import Persona
from guiforge.worlds.render import TemplateError, renderer
from guiforge.worlds.runtime import shared_faker
from guiforge.worlds.seeds import PersonaSeeds, data_dir, load_persona_seeds
from guiforge.yamlfile import PathKey, YamlSource, read_yaml

# fields that take a bare expression (or a {{ }} template) rather than text
_EXPR_KEYS = {"each", "when", "expr"}
_EXPR_IF_STR = {"repeat", "choice", "sample", "day"}
_CONTEXT = {"me", "people", "facts", "docs", "base_date", "today", "currency", "i", "it",
            "home", "destinations", "vat", "hotel_vat", "docno"}


def scenarios_dir() -> Path:
    return data_dir() / "scenarios"


def load_scenario(path: str | Path, seeds: PersonaSeeds | None = None) -> Scenario:
    src = read_yaml(path)
    if not isinstance(src.data, dict):
        raise src.error((), "a scenario file must be a mapping (id, title, vars, people, ...)")
    sc = src.validate(Scenario).model_copy(update={"file": src.file})
    sc._lines = dict(src.lines)
    _check(sc, src, seeds or load_persona_seeds())
    return sc


def load_scenarios(directory: str | Path | None = None) -> dict[str, Scenario]:
    """Every ``*.yaml`` scenario in ``directory`` (default: data/scenarios), by id."""
    d = Path(directory) if directory else scenarios_dir()
    files = sorted(d.glob("*.yaml"))
    if not files:
        raise ConfigError(
            str(d),
            "",
            "no scenario files (*.yaml) found; set GUIFORGE_HOME to the checkout that holds data/",
        )
    seeds = load_persona_seeds()
    return {sc.id: sc for sc in (load_scenario(f, seeds) for f in files)}


def suitable_scenarios(
    persona: Persona, scenarios: dict[str, Scenario], seeds: PersonaSeeds | None = None
) -> list[Scenario]:
    """The scenarios that fit the persona's occupation group (``suits``; empty fits anyone)."""
    group = (seeds or load_persona_seeds()).group_of(persona.occupation)
    return [s for s in scenarios.values() if not s.suits or group in s.suits]


# -- checks -------------------------------------------------------------------------------
def _check(sc: Scenario, src: YamlSource, seeds: PersonaSeeds) -> None:
    if sc.id != Path(src.file).stem:
        raise src.error(("id",), f"id {sc.id!r} must equal the file name {Path(src.file).stem!r}")
    for i, g in enumerate(sc.suits):
        if g not in seeds.occupation_groups:
            raise src.error(
                ("suits", i),
                f"unknown occupation group {g!r} (one of {', '.join(seeds.occupation_groups)})",
            )
    _check_references(sc, src)
    _check_templates(sc, src)


def _literal(s: str) -> bool:
    return "{{" not in s and "{%" not in s


def _check_references(sc: Scenario, src: YamlSource) -> None:
    roles = set(sc.people) | {"me"}
    doc_ids = {d.id for d in sc.documents if _literal(d.id)}
    templated_docs = any(not _literal(d.id) for d in sc.documents)
    fact_keys = {f.key for f in sc.facts if _literal(f.key)}
    templated_facts = any(not _literal(f.key) for f in sc.facts)

    def role(r: str, path: PathKey, allow_me: bool = True) -> None:
        if not _literal(r):
            return  # a templated role is checked when the world is built
        if r not in roles or (r == "me" and not allow_me):
            raise src.error(path, f"unknown role {r!r} (roles: {', '.join(sorted(roles))})")

    def cites(keys: list[str], path: PathKey) -> None:
        for k in keys:
            if _literal(k) and k not in fact_keys and not templated_facts:
                raise src.error(path, f"cites {k!r}, which is not a fact key")

    for n, e in enumerate(sc.events):
        for r in e.attendees:
            role(r, ("events", n, "attendees"), allow_me=False)
    for n, d in enumerate(sc.documents):
        role(d.author, ("documents", n, "author"))
    for n, em in enumerate(sc.emails):
        path = ("emails", n)
        for r in [em.from_, *em.to, *em.cc]:
            role(r, (*path, "from" if r == em.from_ else "to"))
        for a in em.attachments:
            if _literal(a) and a not in doc_ids and not templated_docs:
                raise src.error((*path, "attachments"), f"attachment {a!r} is not a document id")
        cites(em.cites, (*path, "cites"))
    for n, ch in enumerate(sc.chats):
        for r in ch.participants:
            role(r, ("chats", n, "participants"), allow_me=False)
        for j, m in enumerate(ch.messages):
            if _literal(m.from_) and m.from_ != "me" and m.from_ not in ch.participants:
                raise src.error(
                    ("chats", n, "messages", j, "from"), f"{m.from_!r} is not 'me' or a participant"
                )
            cites(m.cites, ("chats", n, "messages", j, "cites"))
    for n, note in enumerate(sc.notes):
        cites(note.cites, ("notes", n, "cites"))
    for n, f in enumerate(sc.facts):
        literal_doc = f.source.startswith("doc:") and _literal(f.source) and not templated_docs
        if literal_doc and not any(f.source[4:].startswith(d + ".") for d in doc_ids):
            raise src.error(
                ("facts", n, "source"), f"source {f.source!r} names no document of this scenario"
            )


def _known_names(sc: Scenario, data: Any) -> set[str]:
    names = set(_CONTEXT) | set(renderer().env.globals) | set(sc.vars)

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            if "as" in v and isinstance(v["as"], str):
                names.add(v["as"])
            if "repeat" in v and isinstance(v.get("item"), dict):
                names.update(v["item"])
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(data)
    return names


def _check_templates(sc: Scenario, src: YamlSource) -> None:
    known = _known_names(sc, src.data)
    members = {
        "people": set(sc.people),
        "facts": {f.key for f in sc.facts},
        "docs": {d.id for d in sc.documents},
    }
    dynamic = {k for k, v in members.items() if any(not _literal(x) for x in v)}
    r = renderer()
    en = shared_faker("en_US")
    order = list(sc.vars)

    def known_at(path: PathKey) -> set[str]:
        # a variable sees only the variables declared before it
        if len(path) >= 2 and path[0] == "vars" and path[1] in sc.vars:
            later = set(order[order.index(str(path[1])) :])
            return known - later
        return known

    def visit(v: Any, path: PathKey) -> None:
        if isinstance(v, dict):
            if isinstance(v.get("faker"), str) and (
                not faker_provider_ok(v["faker"]) or not hasattr(en, v["faker"])
            ):
                raise src.error((*path, "faker"), f"no usable Faker provider {v['faker']!r}")
            for k, x in v.items():
                if isinstance(x, str) and (k in _EXPR_KEYS or k in _EXPR_IF_STR) and _literal(x):
                    visit("{{ " + x + " }}", (*path, k))
                elif k == "money" and isinstance(x, list):  # bounds may be expressions
                    for i, b in enumerate(x):
                        visit(
                            "{{ " + b + " }}" if isinstance(b, str) and _literal(b) else b,
                            (*path, k, i),
                        )
                else:
                    visit(x, (*path, k))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                visit(x, (*path, i))
        elif isinstance(v, str) and not _literal(v):
            _check_one(r, v, path, src, known_at(path), members, dynamic)

    visit(src.data, ())


def _check_one(r: Any, text: str, path: PathKey, src: YamlSource, known: set[str],
               members: dict[str, set[str]], dynamic: set[str]) -> None:  # fmt: skip
    try:
        free = r.names(text)
        tree = r.env.parse(text)
    except TemplateError as e:
        raise src.error(path, str(e)) from None
    unknown = sorted(free - known)
    if unknown and path[:1] == ("vars",) and unknown[0] in _all_vars(src):
        raise src.error(
            path, f"{unknown[0]!r} is declared after this variable; move it up (vars run in order)"
        )
    if unknown:
        raise src.error(
            path,
            f"unknown name {unknown[0]!r} in template (define it under vars, or check the spelling)",
        )
    for node in tree.find_all(nodes.Getattr):
        name = node.node.name if isinstance(node.node, nodes.Name) else None
        if name in members and name not in dynamic and node.attr not in members[name]:
            have = ", ".join(sorted(members[name])) or "none"
            raise src.error(path, f"{name}.{node.attr}: no such entry (have: {have})")


def _all_vars(src: YamlSource) -> set[str]:
    v = src.data.get("vars") if isinstance(src.data, dict) else None
    return set(v) if isinstance(v, dict) else set()
