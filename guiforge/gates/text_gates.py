"""Gates on the instruction text: it must not give the answer away, must name only
entities that exist, and must not nearly repeat another task's instruction."""

from __future__ import annotations

import re
from collections.abc import Iterable

from guiforge.worlds.formats import find_number, parse_amounts

# Double or typographic quotes; a single quote counts only when it is not an apostrophe
# (not between letters: "What's", "Parents' evening").
_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]{3,120})[\"“”«»]|(?<!\w)['‘]([^'‘’]{3,120})['’](?!\w)")
_NUMERIC = re.compile(r"^[\s$€£¥₹%+-]*[\d.,\s']+[\s$€£¥₹%A-Z]{0,4}$")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_WORD = re.compile(r"\w+", re.UNICODE)


def normalize(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold()))


def leaks(instruction: str, secrets: Iterable[str]) -> list[str]:
    """The secrets (answers) the instruction reveals; numbers match in any format."""
    found = []
    for secret in secrets:
        secret = str(secret).strip()
        if not secret:
            continue
        amounts = parse_amounts(secret)
        if amounts and _NUMERIC.match(secret):  # "412.50", "412,50 €": compare as a number
            if find_number(instruction, amounts[0]):
                found.append(secret)
        elif normalize(secret) and normalize(secret) in normalize(instruction):
            found.append(secret)
    return found


def unknown_entities(instruction: str, world_text: str) -> list[str]:
    """Quoted names and email addresses in the instruction that the world does not contain."""
    haystack = normalize(world_text)
    missing = []
    for m in _QUOTED.finditer(instruction):
        quoted = (m.group(1) or m.group(2) or "").strip()
        if quoted and normalize(quoted) not in haystack:
            missing.append(quoted)
    lowered = world_text.lower()
    missing.extend(e for e in _EMAIL.findall(instruction) if e.lower() not in lowered)
    return missing


_TO_MODEL = re.compile(r"\b(use (the|your) ([\w-]+ )?tools?|rates? from memory|from memory|as an ai|language model|"
                       r"you have access to|available tools|(from|with) the tools)\b", re.I)


def speaks_to_model(instruction: str) -> str | None:
    """The words that address the model ("use the tools, not rates from memory") instead of
    sounding like a user, or None."""
    m = _TO_MODEL.search(instruction)
    return m.group(0) if m else None


def shingles(text: str, n: int = 3) -> set[str]:
    words = normalize(text).split()
    return {" ".join(words[i : i + n]) for i in range(max(len(words) - n + 1, 1))}


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def near_duplicates(items: list[tuple[str, str, str]], threshold: float = 0.9) -> dict[str, str]:
    """``items`` are (task_id, group, instruction); returns {duplicate id: the id it repeats}.

    Within a group (a skill), instructions whose word 3-gram Jaccard similarity reaches the
    threshold are duplicates; across groups, identical normalised text is. The task with
    the smallest id is kept, so every shard computes the same answer."""
    dupes: dict[str, str] = {}
    by_text: dict[str, str] = {}
    for task_id, _, text in sorted(items):
        key = normalize(text)
        if key in by_text:
            dupes[task_id] = by_text[key]
        else:
            by_text[key] = task_id
    groups: dict[str, list[tuple[str, set[str]]]] = {}
    for task_id, group, text in sorted(items):
        if task_id in dupes:
            continue
        sh = shingles(text)
        for kept_id, kept in groups.get(group, []):
            if jaccard(sh, kept) >= threshold:
                dupes[task_id] = kept_id
                break
        else:
            groups.setdefault(group, []).append((task_id, sh))
    return dupes
