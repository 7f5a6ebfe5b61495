"""Instructions in a user's voice: the grammar that turns a card's rendered phrasing into
what a person would type to an assistant: as is, polite or indirect, chatty, terse or all in
lower case, with the reason behind it, with a closer, now and then with a typo; in the
persona's language where the card has phrasings in it (``data/voices.yaml`` holds each
language's words).

The card's phrasing (``instructions:``, or ``localized:`` for the persona's language) is the
core; the voice adds a register around it and never touches what the gates read: quoted
names, e-mail addresses and numbers stay exactly as rendered, so the leak and entity gates
judge the same facts. A reason is only ever one that belongs to the task (the card's
``context``, or the scenario's when the task is about the scenario's things); with none, the
task is said without one. Every choice comes from the task's seeded ``random.Random``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from functools import cache
from typing import Any

import yaml

from guiforge.paths import DATA_DIR

# First words that make a sentence an instruction, which "could you ..." can wrap.
IMPERATIVE = frozenset(re.findall(r"\w+", """
open reply send add move find look check forward archive book buy put pin write create update change make
fix sort clean tell set save mark go categorise categorize recategorise pay transfer rename insert delete
remove note start share schedule reschedule invite compute count work get copy email text message call
favourite favorite star append summarise summarize read pick order choose fill type enter compare list
use give let show total turn file clear correct replace draft attach bring jot drop grab pull dig figure
work bump shift push swap log ping
"""))
QUESTION_WORDS = frozenset(re.findall(r"\w+", "what how which when who where whose is does do are can"))

_PROTECTED = re.compile(r"[\"“”«»][^\"“”«»]*[\"“”«»]|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\S*\d\S*")
_WORD = re.compile(r"\b[^\W\d_A-ZÀ-Ý]{5,}\b")  # a plain lower-case word of five letters or more
_NAME = re.compile(r"\b[A-ZÀ-Ý][\w'’-]*")

STYLES = {  # register -> weight; "+" joins registers
    "en": {"plain": 2, "polite": 3, "context": 3, "terse": 2, "lower": 1, "chatty": 2, "polite+context": 2,
           "context+closer": 2, "plain+closer": 2, "chatty+closer": 1},
    "other": {"plain": 3, "polite": 3, "terse": 2, "chatty": 2, "plain+closer": 2, "polite+closer": 1,
              "chatty+closer": 1},
}
TYPO_RATE = 0.08


@cache
def registers() -> dict[str, dict[str, Any]]:
    """Each language's words (data/voices.yaml)."""
    with open(DATA_DIR / "voices.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)


def languages() -> frozenset[str]:
    return frozenset(registers())


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text else text


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _first_word(text: str) -> str:
    m = re.match(r"[A-Za-z']+", text)
    return m.group(0).lower() if m else ""


def _sentences(text: str) -> tuple[str, str]:
    """The first sentence and the rest (split at '. ', '? ' or '! ' outside quotes)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "\"“”«»":
            depth ^= 1
        elif ch in ".?!" and not depth and text[i + 1:i + 2] == " ":
            return text[:i + 1], text[i + 2:]
    return text, ""


def _spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _PROTECTED.finditer(text)]


def typo(text: str, rng: random.Random) -> str:
    """Swap two inner letters of one plain lowercase word (never a quoted name, an address or
    a number: the gates and the verifier read those)."""
    protected = _spans(text)
    words = [m for m in _WORD.finditer(text) if not any(a <= m.start() < b for a, b in protected)]
    if not words:
        return text
    m = rng.choice(words)
    word = m.group(0)
    i = rng.randrange(1, len(word) - 2)
    swapped = word[:i] + word[i + 1] + word[i] + word[i + 2:]
    return text[:m.start()] + swapped + text[m.end():]


def lowercase(text: str) -> str:
    """All in lower case, as typed in a hurry, except quoted text, addresses, numbers and
    names (a capitalised word inside a sentence: "tell Anna"), and without the last full stop."""
    protected = _spans(text) + [m.span() for m in _NAME.finditer(text) if m.start() > 0]
    out, last = [], 0
    for a, b in sorted(protected):
        if a < last:
            continue
        out += [text[last:a].lower(), text[a:b]]
        last = b
    out.append(text[last:].lower())
    return "".join(out).rstrip(".")


def _polite(core: str, rng: random.Random, words: dict[str, Any]) -> str | None:
    if "polite" in words:  # a language without English grammar: words around the core
        return rng.choice(words["polite"]).format(core=core)
    first, rest = _sentences(core)
    word = _first_word(first)
    tail = f" {rest}" if rest else ""
    if word in IMPERATIVE and first.endswith("."):
        return rng.choice(words["polite_imperative"]).format(body=_lower_first(first[:-1])) + tail
    if word in QUESTION_WORDS and first.endswith("?"):
        return rng.choice(words["polite_question"]).format(core=core, lower=_lower_first(core))
    return None


def _terse(core: str, rng: random.Random, words: dict[str, Any]) -> str:
    text = core.rstrip(".")
    text = re.sub(r"^(Please|Kindly) ", "", text)
    if _first_word(text) in IMPERATIVE | QUESTION_WORDS or "polite" in words:
        text = _lower_first(text)
    return rng.choice(words["terse"]) + text


def _context(core: str, reason: str, rng: random.Random, words: dict[str, Any]) -> str:
    return rng.choice(words["context"]).format(Reason=_upper_first(reason), reason=reason, core=core,
                                               lower=_lower_first(core))


def speak(core: str, rng: random.Random, scenario: str = "", language: str = "en",
          reasons: Sequence[str] = ()) -> tuple[str, str]:  # fmt: skip
    """(instruction, voice): the card's rendered phrasing, already in ``language``, said in
    one register. ``reasons`` are the task's own reasons (the card's context); ``scenario``
    adds the scenario's reasons (pass it only when the task is about the scenario's things).
    ``voice`` names the choices (e.g. "polite+context+reason:card", "de:chatty+typo") for the
    realism report."""
    words = registers().get(language) or registers()["en"]
    pool = list(reasons) if language == "en" else []
    from_card = len(pool)
    if language == "en" and scenario:
        pool += words["scenario"].get(scenario, [])
    styles = STYLES["en" if language == "en" else "other"]
    names = [s for s in styles if pool or "context" not in s]
    style = rng.choices(names, [styles[s] for s in names])[0]
    text = core.strip()
    applied = []
    for part in style.split("+"):
        if part == "polite":
            polite = _polite(text, rng, words)
            if polite is not None:
                text = polite
                applied.append(part)
        elif part == "terse":
            text = _terse(text, rng, words)
            applied.append(part)
        elif part == "lower":
            text = lowercase(text)
            applied.append(part)
        elif part == "chatty":
            text = rng.choice(words["chatty"]) + text
            applied.append(part)
        elif part == "context":
            k = rng.randrange(len(pool))
            text = _context(text, pool[k], rng, words)
            applied += ["context", "reason:card" if k < from_card else "reason:scenario"]
        elif part == "closer":
            text = f"{text} {rng.choice(words['closers'])}"
            applied.append(part)
    if rng.random() < TYPO_RATE:
        text = typo(text, rng)
        applied.append("typo")
    voice = "+".join(applied) or "plain"
    return text, voice if language == "en" else f"{language}:{voice}"
