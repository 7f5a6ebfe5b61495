"""The offline judge: a real judge that needs no model, from the same view a VLM judge gets.

It reads the key screenshots with tesseract OCR and the action trace, and
- checks the values and names the instruction asks for (quoted text, e-mail addresses,
  numbers) against what was typed, answered or passed to a tool and what the final screens
  show;
- checks that every number the agent typed or answered is backed by something it was told
  or shown (a changed digit is the commonest silent mistake);
- flags loops, step-budget exhaustion, errors in the environment's feedback, pointer actions
  that changed nothing, and a missing final state.
It may be wrong; the agreement audit measures how often.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from guiforge.judge.evidence import JudgeView
from guiforge.judge.refusal import refusal_grounds
from guiforge.judge.shifts import shifts, unshifted
from guiforge.judge.sources import left_for, typed_over
from guiforge.judge.verdict import Verdict

NAME = "offline:ocr-judge"
_FINAL = ("terminate", "answer")
_POINTER = ("click", "double_click", "right_click", "tap", "long_press")
_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]{2,120})[\"“”«»]|(?:^|\s)['‘]([^'’\n]{2,120})['’](?=[\s,.;:!?)]|$)")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# digits after one or two capitals that start a word ("C130", "AB12", "Q3") are a cell reference
# or a name, not a value (a formula's range "=SUM(D2:D111)" names no number)
_NUMBER = re.compile(r"(?<![\d.,])(?<!\b[A-Z])(?<!\b[A-Z]{2})\d(?:[\d,.:/-]*\d)?(?!\d)")
_CLOCK = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?![\d:])(?:\s*([ap])\.?\s*m\b\.?)?", re.I)


_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
# A date names which item to act on; how a screen writes it varies too much to require it.
# a day is one or two digits not followed by a third: "January 2024" is a month and a year
_DATE = re.compile(rf"(?i)\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}(?:,?\s+\d{{4}})?|\b{_MONTH}\s+\d{{1,2}}(?!\d)(?:st|nd|rd|th)?"
                   rf"(?:,?\s+\d{{4}})?|\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b(?:19|20)\d{{2}}\b")
# How to compute or write a value, not a value to find: "n - 1 in the denominator", "to 2 decimals"
# A file's name names it ("budget_2024.xlsx"); its digits are not a value to find
_FILE = re.compile(r"(?i)[\w.-]+\.(?:xlsx|xls|ods|csv|docx|doc|odt|pptx|odp|txt|md|pdf|png|jpe?g|json|py)\b")
# Values given as examples of a format ("values like 1,234.50 or 12,50 € into 1234.50"): the
# phrase runs from the cue to the end of its sentence; they are not values the task asks for
_EXAMPLE = re.compile(r"(?i)\b(?:like|such as|e\.\s?g\.|for example|for instance)\s.*?(?:[.!?;](?=\s|$)|$)")
# A number a format is shown with: "numbers are plain (1234.50)", "Zahlen und Daten (1234.50, YYYY-MM-DD)"
_FORMAT_EXAMPLE = re.compile(r"(?i)\b(?:numbers|zahlen|n[uú]meros|nombres|numeri)\b(?:[^.;:()]{0,25}\(|\s+to\s)\s*"
                             r"\d[\d.,]*")
_SPEC = re.compile(r"(?i)\b[a-z]\s*[-+*/]\s*\d+\b|\b\d+\s*(?:decimals?|decimal places|dp|digits|"
                   r"significant figures|places)\b")


def normalize(text: str) -> str:
    """Lowercase, accents folded, runs of anything but letters and digits as one space."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return " ".join(re.sub(r"[^0-9a-z@]+", " ", text).split())


def digits(text: str) -> str:
    """The digits a number is written with: '1,234.50' -> '123450'."""
    return re.sub(r"\D", "", text)


def expected_values(instruction: str) -> list[str]:
    """What the instruction names that must end up somewhere: quoted text, e-mail
    addresses and numbers (a year alone is left out: it is usually context)."""
    values: list[str] = []
    for m in _QUOTED.finditer(instruction):
        values.append((m.group(1) or m.group(2)).strip())
    values.extend(_EMAIL.findall(instruction))
    text = instruction
    for not_asked in (_FILE, _EXAMPLE, _FORMAT_EXAMPLE, _DATE, _SPEC):
        text = not_asked.sub(" ", text)
    for m in _NUMBER.finditer(text):
        if not any(m.group(0) in v for v in values):
            values.append(m.group(0))
    return list(dict.fromkeys(v for v in values if normalize(v)))


@dataclass
class Text:
    """A body of evidence: normalized words for names and phrases, number forms for values."""

    words: str
    tokens: set[str]
    numbers: set[str]

    @classmethod
    def of(cls, *raw: str) -> Text:
        joined = " ".join(raw)
        words = normalize(joined)
        return cls(words, set(words.split()), number_forms(joined))

    def __add__(self, other: Text) -> Text:
        return Text(f"{self.words} {other.words}", self.tokens | other.tokens, self.numbers | other.numbers)

    def has(self, value: str) -> bool:
        """The value is here: a number in any notation, a phrase word for word, or (OCR
        drops and misreads characters) four in five of its words."""
        if _NUMBER.fullmatch(value.strip()):
            return _number_in(value, self.numbers)
        v = normalize(value)
        if not v or f" {v} " in f" {self.words} ":
            return True
        words = v.split()
        return len(words) >= 3 and sum(w in self.tokens for w in words) >= 0.8 * len(words)


def _stem(token: str) -> str:
    """The digits without a decimal part's trailing zeros: '12.50' -> '125', '40,00' -> '40'
    (only the cents go: '1,200' and '100' keep theirs)."""
    m = re.fullmatch(r"(.*\d)[.,](\d{1,2})", token)
    if m and m.group(2).endswith("0"):
        return digits(m.group(1)) + m.group(2).rstrip("0")
    return digits(token)


def number_forms(raw: str) -> set[str]:
    """Every way a number in ``raw`` may be matched: its digits, without trailing cents'
    zeros, and each part of a date or time (2024-09-12 -> 2024, 9, 12)."""
    forms: set[str] = set()
    for m in _NUMBER.finditer(raw):
        token = m.group(0)
        forms.update({digits(token), _stem(token)})
        for part in re.split(r"[-/:]", token):
            if digits(part):
                forms.add(digits(part).lstrip("0") or "0")
    # a time in the other clock: a screen's "1:30 PM" is an answer's 13:30, and the reverse
    for m in _CLOCK.finditer(raw):
        hour, minute, half = int(m.group(1)), m.group(2), (m.group(3) or "").lower()
        if half:
            hour = hour % 12 + (12 if half == "p" else 0)
            forms.update({f"{hour:02d}{minute}", f"{hour}{minute}"})
        elif 13 <= hour <= 23:
            forms.add(f"{hour - 12}{minute}")
    return forms


def _number_in(value: str, forms: set[str]) -> bool:
    d = digits(value)
    return bool(d) and (d in forms or _stem(value) in forms or (d.lstrip("0") or "0") in forms)


def _produced(view: JudgeView) -> list[str]:
    out = []
    for s in view.steps:
        a = s.action or {}
        for key in ("text", "answer"):
            if a.get(key):
                out.append(str(a[key]))
    return out


def _said(view: JudgeView) -> list[str]:
    """What the agent typed or answered: a tool's arguments and code are its own workings."""
    return [str(s.action.get("answer") or s.action.get("text") or "") for s in view.steps
            if s.action and s.action["type"] in ("type", "answer")]


def _numbers(text: str) -> list[str]:
    """Numbers worth checking: two digits or more (a lone digit is too common to mean anything)."""
    return list(dict.fromkeys(m.group(0) for m in _NUMBER.finditer(text) if len(digits(m.group(0))) >= 2))


class OfflineJudge:
    """Scores a view; ``threshold`` is the score at or above which it says success."""

    name = NAME

    def __init__(self, threshold: float = 0.6):
        self.threshold = threshold

    def frames_needed(self, view: JudgeView) -> list[str]:
        """The key frames whose text could change the verdict, so only those are OCR'd: the
        final frame when an asked-for value was not typed or answered, every key frame when
        a phrase is still missing or a typed number is backed by nothing the agent was told."""
        frames = [sha for _, sha in view.key_frames]
        if view.env_failure or not frames:
            return []
        if (view.last_action or {}).get("status") == "infeasible":
            return frames  # a refusal is judged by what the agent saw: an obstacle, or the thing in view
        made = Text.of(*_produced(view))
        told = Text.of(view.instruction, *(s.feedback for s in view.steps))
        missing = [v for v in expected_values(view.instruction) if not made.has(v)]
        unsupported = [n for n in _numbers(" ".join(_said(view))) if not _number_in(n, told.numbers)]
        if unsupported or any(not _NUMBER.fullmatch(v) for v in missing):
            return list(dict.fromkeys([*frames, *typed_over(view, unsupported), *left_for(view, unsupported)]))
        return frames[-1:] if missing or _autosaved_typing(view) else []

    def points_needed(self, view: JudgeView) -> list[tuple[str, int, int]]:
        """(frame, x, y) of the closing clicks that named no element (the desktop records
        none), when nothing else shows the episode finished: the text under them may be the
        commit ("Save" in LibreOffice's File menu)."""
        last = view.last_action or {}
        if view.env_failure or last.get("status") == "infeasible" or last.get("type") not in _FINAL:
            return []
        if _finished(view):
            return []
        return [(s.image_sha256, s.action["x"], s.action["y"]) for s in _closing(view)
                if s.action["type"] in _POINTER and not s.target and s.image_sha256]

    def judge(self, view: JudgeView, screen_text: dict[str, str],
              point_text: dict[tuple[str, int, int], str] | None = None) -> Verdict:
        """``screen_text`` holds the OCR of (at least) :meth:`frames_needed`, ``point_text``
        the text under :meth:`points_needed`."""
        frames = [sha for _, sha in view.key_frames]
        if view.env_failure:
            return Verdict(False, 0.0, "the environment failed; no outcome to judge", NAME, flags=["env_failure"],
                           evidence_images=frames)
        produced = _produced(view)
        made = Text.of(*produced)
        final = Text.of(screen_text.get(frames[-1], "")) if frames else Text.of()
        screens = Text.of(*(screen_text.get(sha, "") for sha in frames))
        told = Text.of(view.instruction, *(s.feedback for s in view.steps))
        flags, notes, evidence_steps = [], [], set()
        score = 1.0

        def flag(name: str, penalty: float, note: str, steps: list[int] = ()) -> None:
            nonlocal score
            flags.append(name)
            notes.append(note)
            evidence_steps.update(steps)
            score -= penalty

        steps = view.steps
        last = steps[-1] if steps else None
        if last is None:
            flag("no_actions", 1.0, "no action was taken")
        elif last.action is None:
            flag("unparsed_reply", 1.0, "the episode ended on a reply that did not parse", [last.index])
        elif last.action["type"] not in _FINAL:
            if view.max_steps and len(steps) >= view.max_steps:
                flag("step_budget", 1.0, f"the step budget ({view.max_steps}) ran out", [last.index])
            else:
                flag("no_final_state", 1.0, "the trajectory stops without finishing", [last.index])
        # a tools episode's images are documents a tool opened, not the state: its end is the answer
        if view.domain != "tools" and any(s.image_sha256 for s in steps) and not steps[-1].image_sha256:
            flag("no_final_state", 0.5, "no screenshot of the final state")

        infeasible = last is not None and last.action is not None and last.action.get("status") == "infeasible"
        if infeasible:  # the agent's answer is "this cannot be done": a refusal, judged as one
            seen_text = " ".join([*(screen_text.get(sha, "") for sha in frames), *(s.feedback for s in steps)])
            grounds = refusal_grounds(view.instruction, seen_text)
            seen = [v for v in expected_values(view.instruction) if screens.has(v)]
            if grounds:
                notes.append(f"reported infeasible: {grounds}")
            elif seen:  # nothing says it cannot be done, and what was asked is in view: giving up
                flag("infeasible_but_seen", 0.6, f"reported infeasible, yet the screens show {seen[:3]}",
                     [last.index])
        elif last is not None and last.action is not None and not _finished(view, final, point_text or {}):
            flag("unfinished", 0.5, "no action that commits the change (send, save, submit, confirm...) "
                 "and no answer before the end", [last.index])

        errors = [s for s in steps if s.error]
        if errors:
            tail = [s for s in errors if s.index >= len(steps) - 2]
            flag("feedback_error", 0.5 if tail else 0.1,
                 f"{len(errors)} action(s) answered with an error, e.g. {errors[-1].error[:80]!r}",
                 [s.index for s in errors])

        loop = _loop(view)
        if loop:
            flag("loop", 0.5, f"the same action repeated on an unchanged screen at steps {loop}", loop)

        missed = _missed_pointer(view)
        if missed:
            flag("no_effect", 0.25 * len(missed), f"pointer action(s) at steps {missed} changed nothing and "
                 "were not retried", missed)

        # Names and phrases may be anywhere the agent looked; values must be typed or end on screen.
        fed = Text.of(*(s.feedback for s in steps))  # what the environment answered (a tool's output)
        missing = [v for v in expected_values(view.instruction)
                   if not ((made + final + fed).has(v) or (not _NUMBER.fullmatch(v) and screens.has(v)))]
        if missing and not infeasible:
            flag("value_missing", 0.45 * min(len(missing), 2),
                 f"asked-for value(s) not typed, answered or on the final screen: {missing[:4]}")

        support = told + screens
        moves = shifts(view.instruction)
        unsupported = [n for n in _numbers(" ".join(_said(view))) if not _number_in(n, support.numbers)]
        # a value copied from another app is backed by the screen the agent left to type it
        seen = Text.of(*(screen_text.get(sha, "") for sha in left_for(view, unsupported)))
        unsupported = [n for n in unsupported if not _number_in(n, seen.numbers)]
        # a time moved "one hour later" is backed by the time it was: on a key frame, or in the
        # field the agent typed over (its frame shows the old value)
        was = support + Text.of(*(screen_text.get(sha, "") for sha in typed_over(view, unsupported)))
        unsupported = [n for n in unsupported
                       if not any(f in was.numbers for minutes in moves for f in unshifted(n, minutes))]
        if unsupported:
            steps_with = [s.index for s in steps if s.action and any(n in str(s.action.get("text") or "")
                                                                     or n in str(s.action.get("answer") or "")
                                                                     for n in unsupported)]
            flag("unsupported_value", 0.45, f"typed or answered number(s) {unsupported[:4]} appear nowhere "
                 "in the instruction, the feedback or the screens", steps_with)

        score = max(0.0, min(1.0, score))
        success = score >= self.threshold
        rationale = "; ".join(notes) if notes else "every asked-for value is present and the agent finished cleanly"
        if frames:
            evidence_steps.add(view.key_frames[-1][0])
        return Verdict(success, round(score, 3), rationale[:2000], NAME, evidence_steps=sorted(evidence_steps),
                       evidence_images=frames, flags=flags)


def _action_key(action: dict | None) -> tuple:
    return tuple(sorted((action or {}).items(), key=lambda kv: kv[0])) if action else ()


def _loop(view: JudgeView, repeats: int = 3) -> list[int]:
    """Step indices of the first run of ``repeats`` identical actions on one unchanged frame
    (a terminal's frame grows by each command's scrollback: a repeated command is enough)."""
    run: list[int] = []
    prev = None
    for s in view.steps:
        key = (_action_key(s.action), None if (s.action or {}).get("type") == "bash" else s.image_sha256)
        if s.action is not None and s.action["type"] not in _FINAL and key == prev:
            run.append(s.index)
            if len(run) >= repeats:
                return run
        else:
            run = [s.index]
        prev = key
    return []


def _missed_pointer(view: JudgeView) -> list[int]:
    """Pointer actions after which the screen stayed the same and that the next action did
    not redo (a retry near the same point)."""
    missed = []
    steps = view.steps
    for s, nxt in zip(steps, steps[1:], strict=False):
        a = s.action
        if (not a or a["type"] not in _POINTER or s.target or not s.image_sha256
                or s.image_sha256 != nxt.image_sha256):
            continue  # a hit on an element (a focused field looks unchanged) is not a miss
        b = nxt.action or {}
        retried = b.get("type") == a["type"] and abs((b.get("x") or 0) - a["x"]) + abs((b.get("y") or 0) - a["y"]) < 200
        if not retried:
            missed.append(s.index)
    return missed


# Words on a control or in feedback that mean a change was committed, not only prepared.
_COMMIT = re.compile(r"\b(send|sent|save|saved|submit\w*|confirm\w*|pay|paid|book\w*|order\w*|place|placed|add|added|"
                     r"create\w*|archive\w*|update\w*|invite\w*|move\w*|moved|star\w*|transfer\w*|"
                     r"schedul\w*|apply|applied|ok|delete\w*|remove\w*|wrote|written|exit code 0|export\w*)\b")
_STOP = frozenset(("the", "and", "for", "with", "from", "that", "this", "into", "your", "their", "them", "they",
                   "have", "what", "which", "when", "where", "please", "about", "after", "before", "then", "also",
                   "just", "file", "make", "sure", "keep"))


# Words on a control that only lead to a commit, a step a skipped confirmation stops at.
_PREPARE = frozenset(("review", "preview", "next", "continue"))


# Apps that keep an edit as it is typed, with no Save to press: there the typing commits it.
AUTOSAVE_APPS = frozenset({"notes"})


def _autosaved_typing(view: JudgeView) -> str | None:
    """The text of a last action that typed into an app that saves as it goes (the final
    screen must show it, so that frame is read)."""
    acts = [s for s in view.steps if s.action is not None and s.action["type"] not in ("terminate", "wait")]
    if acts and acts[-1].action["type"] == "type" and AUTOSAVE_APPS & set(view.apps):
        return acts[-1].action.get("text") or None
    return None


def _closing(view: JudgeView) -> list:
    """The last three actions that do something (a wait or the terminate does not)."""
    return [s for s in view.steps if s.action is not None and s.action["type"] not in ("terminate", "wait")][-3:]


def _finished(view: JudgeView, final: Text | None = None, point_text: dict | None = None) -> bool:
    """An answer was given, or one of the last actions committed something: a control or
    feedback that says so, a save shortcut, a command or tool call, (the last action) a
    control named with one of the instruction's own words ("Archive", "Pin note"), or text
    typed into an app that saves as it goes, which the final screen shows."""
    acts = [s for s in view.steps if s.action is not None and s.action["type"] not in ("terminate", "wait")]
    if any(s.action["type"] == "answer" for s in acts):
        return True
    typed = _autosaved_typing(view)
    if typed and final is not None and final.has(typed):
        return True
    asked = {w for w in normalize(view.instruction).split() if len(w) >= 3 and w not in _STOP}
    for i, s in enumerate(reversed(acts[-3:])):
        a = s.action
        keys = [k.lower() for k in a.get("keys") or []]
        # a click that named no element: the text OCR read under it
        target = s.target or (point_text or {}).get((s.image_sha256, a.get("x"), a.get("y")))
        said = normalize(" ".join(str(x) for x in (target, s.feedback) if x))
        if target and _PREPARE & set(normalize(target).split()):
            continue  # "Review transfer" leads to the commit, it is not one
        saves = ("ctrl" in keys and "s" in keys) or (target and "save" in normalize(target).split())
        if saves and i == 0 and view.domain == "desktop":
            continue  # LibreOffice asks whether to keep an xlsx/docx/csv format: a save left there is not done
        if _COMMIT.search(said) or a["type"] in ("bash", "call_tool") or ("ctrl" in keys and "s" in keys):
            return True
        if i == 0 and target and asked & set(normalize(target).split()):
            return True
    return False
