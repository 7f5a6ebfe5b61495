"""Instructions in a user's voice: the grammar that turns a card's rendered phrasing into
what a person would type to an assistant, goal first or with the reason behind it, polite
or terse, now and then with a typo.

The card's phrasing (``instructions:``, one picked per task) is the core; the voice adds a
register around it and never touches what the gates read: quoted names, e-mail addresses
and numbers stay exactly as rendered, so the leak and entity gates judge the same facts.
Every choice comes from the task's seeded ``random.Random``, so a task's text is stable.
"""

from __future__ import annotations

import random
import re

# Why a person in each scenario would be doing this (no names: only the world has those).
CONTEXT: dict[str, tuple[str, ...]] = {
    "expense_report": ("I'm putting my expense report together", "I'm trying to close out this month's expenses",
                       "finance wants my receipts sorted by Friday"),
    "team_offsite": ("I'm organising the team offsite", "the offsite planning is eating my week",
                     "I'm sorting out logistics for the offsite"),
    "job_application": ("I'm in the middle of a job application", "I'm getting my application in order",
                        "I have an interview process going on"),
    "moving_house": ("I'm moving house soon", "the move is coming up fast", "I'm juggling the move"),
    "conference_trip": ("I'm getting ready for the conference trip", "I'm planning my conference travel",
                        "the conference is coming up"),
    "shop_inventory": ("I'm doing the shop's stock admin", "I'm catching up on the shop's paperwork",
                       "it's inventory week at the shop"),
    "teaching_class": ("I'm prepping for class", "I'm catching up on my teaching admin",
                       "term is about to start"),
    "family_event": ("I'm organising the family get-together", "I'm helping plan the family event",
                     "the family event is close"),
    "freelance_invoicing": ("I'm doing my freelance invoicing", "I'm chasing up client payments",
                            "it's invoicing day for my freelance work"),
    "renovation_quotes": ("I'm comparing renovation quotes", "we're planning the renovation",
                          "I'm sorting out the builders' quotes"),
}
GENERIC_CONTEXT = ("I'm catching up on admin", "I'm clearing my to-do list", "I'm short on time today")

CLOSERS = ("Thanks!", "Thank you.", "Cheers.", "Thanks a lot.", "No rush.", "Appreciate it.",
           "Let me know once it's done.", "That would really help.")
TERSE_OPENERS = ("quick one: ", "need this: ", "", "", "todo: ")

# First words that make a sentence an instruction, which "could you ..." can wrap.
IMPERATIVE = frozenset(re.findall(r"\w+", """
open reply send add move find look check forward archive book buy put pin write create update change make
fix sort clean tell set save mark go categorise categorize recategorise pay transfer rename insert delete
remove note start share schedule reschedule invite compute count work get copy email text message call
favourite favorite star append summarise summarize read pick order choose fill type enter compare list
use give let show total turn file clear correct replace draft attach bring
"""))
QUESTION_WORDS = frozenset(re.findall(r"\w+", "what how which when who where whose is does do are can"))

_PROTECTED = re.compile(r"[\"“”«»][^\"“”«»]*[\"“”«»]|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\S*\d\S*")
_WORD = re.compile(r"\b[a-z]{5,}\b")


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text else text


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


def typo(text: str, rng: random.Random) -> str:
    """Swap two inner letters of one plain lowercase word (never a quoted name, an address or
    a number: the gates and the verifier read those)."""
    protected = [m.span() for m in _PROTECTED.finditer(text)]
    words = [m for m in _WORD.finditer(text) if not any(a <= m.start() < b for a, b in protected)]
    if not words:
        return text
    m = rng.choice(words)
    word = m.group(0)
    i = rng.randrange(1, len(word) - 2)
    swapped = word[:i] + word[i + 1] + word[i] + word[i + 2:]
    return text[:m.start()] + swapped + text[m.end():]


def _polite(core: str, rng: random.Random) -> str | None:
    first, rest = _sentences(core)
    word = _first_word(first)
    tail = f" {rest}" if rest else ""
    if word in IMPERATIVE and first.endswith("."):
        body = _lower_first(first[:-1])
        return rng.choice((f"Could you {body}?{tail}", f"Can you {body}, please?{tail}", f"Please {body}.{tail}",
                           f"Would you {body}, please?{tail}", f"I'd like you to {body}.{tail}"))
    if word in QUESTION_WORDS and first.endswith("?"):
        return rng.choice((f"Quick question: {_lower_first(core)}", f"Do you know this one? {core}",
                           f"Can you find out for me? {core}", f"{core} Thanks in advance."))
    return None


def _terse(core: str, rng: random.Random) -> str:
    text = core.rstrip(".")
    text = re.sub(r"^(Please|Kindly) ", "", text)
    if _first_word(text) in IMPERATIVE | QUESTION_WORDS:
        text = _lower_first(text)
    return rng.choice(TERSE_OPENERS) + text


def _context(core: str, scenario: str, rng: random.Random) -> str:
    reason = rng.choice(CONTEXT.get(scenario, GENERIC_CONTEXT))
    return rng.choice((f"{reason[:1].upper()}{reason[1:]}. {core}",
                       f"{reason[:1].upper()}{reason[1:]}, so here's one for you: {core}",
                       f"{core} For context: {reason}.",
                       f"Hi! {reason[:1].upper()}{reason[1:]}. {core}"))


STYLES = ("plain", "polite", "context", "terse", "polite+context", "context+closer", "plain+closer")
WEIGHTS = (1, 3, 3, 2, 2, 2, 2)
TYPO_RATE = 0.08


def speak(core: str, rng: random.Random, scenario: str = "") -> tuple[str, str]:
    """(instruction, voice): the card's rendered phrasing said in one register. ``voice``
    names the choices (e.g. "polite+context", "+typo") for the realism report."""
    style = rng.choices(STYLES, WEIGHTS)[0]
    text = core.strip()
    applied = []
    for part in style.split("+"):
        if part == "polite":
            polite = _polite(text, rng)
            if polite is not None:
                text = polite
                applied.append(part)
        elif part == "terse":
            text = _terse(text, rng)
            applied.append(part)
        elif part == "context":
            text = _context(text, scenario, rng)
            applied.append(part)
        elif part == "closer":
            text = f"{text} {rng.choice(CLOSERS)}"
            applied.append(part)
    if rng.random() < TYPO_RATE:
        text = typo(text, rng)
        applied.append("typo")
    return text, "+".join(applied) or "plain"
