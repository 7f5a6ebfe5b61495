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
from guiforge.judge.verdict import Verdict

NAME = "offline:ocr-judge"
_FINAL = ("terminate", "answer")
_POINTER = ("click", "double_click", "right_click", "tap", "long_press")
_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]{2,120})[\"“”«»]|(?:^|\s)['‘]([^'’\n]{2,120})['’](?=[\s,.;:!?)]|$)")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,.:/-]*\d(?![\w])|(?<![\w.,])\d(?![\w.,:/-])")


def normalize(text: str) -> str:
    """Lowercase, accents folded, runs of anything but letters and digits as one space."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return " ".join(re.sub(r"[^0-9a-z@]+", " ", text).split())


def digits(text: str) -> str:
    """The number a string writes, as bare digits: '1,234.50' -> '123450', '1234.5' -> '12345'."""
    d = re.sub(r"\D", "", text)
    return d.rstrip("0") if re.search(r"[.,]\d*0$", text) else d


def expected_values(instruction: str) -> list[str]:
    """What the instruction names that must end up somewhere: quoted text, e-mail
    addresses and numbers (a year alone is left out: it is usually context)."""
    values: list[str] = []
    for m in _QUOTED.finditer(instruction):
        values.append((m.group(1) or m.group(2)).strip())
    values.extend(_EMAIL.findall(instruction))
    for m in _NUMBER.finditer(instruction):
        if not any(m.group(0) in v for v in values):
            values.append(m.group(0))
    return list(dict.fromkeys(v for v in values if normalize(v)))


@dataclass
class Evidence:
    produced: str  # what the agent typed, answered, passed to tools or ran (normalized)
    produced_raw: list[str]
    screens: str  # OCR of every key frame (normalized)
    final_screen: str  # OCR of the last key frame (normalized)
    told: str  # instruction and the environment's feedback (normalized)


def _produced(view: JudgeView) -> list[str]:
    out = []
    for s in view.steps:
        a = s.action or {}
        for key in ("text", "answer"):
            if a.get(key):
                out.append(str(a[key]))
    return out


def _contains(haystack: str, value: str) -> bool:
    v = normalize(value)
    if not v:
        return True
    if f" {v} " in f" {haystack} ":
        return True
    d = digits(value)
    return bool(d) and len(d) >= 2 and re.search(rf"(?<!\d){d}(?!\d)", re.sub(r"[ ,.]", "", haystack)) is not None


def _numbers(text: str) -> list[str]:
    return [m.group(0) for m in _NUMBER.finditer(text) if len(digits(m.group(0))) >= 2]


class OfflineJudge:
    """Scores a view; ``threshold`` is the score at or above which it says success."""

    name = NAME

    def __init__(self, threshold: float = 0.6):
        self.threshold = threshold

    def judge(self, view: JudgeView, screen_text: dict[str, str]) -> Verdict:
        frames = [sha for _, sha in view.key_frames]
        if view.env_failure:
            return Verdict(False, 0.0, "the environment failed; no outcome to judge", NAME, flags=["env_failure"],
                           evidence_images=frames)
        produced = _produced(view)
        ev = Evidence(normalize(" ".join(produced)), produced,
                      normalize(" ".join(screen_text.get(sha, "") for sha in frames)),
                      normalize(screen_text.get(frames[-1], "")) if frames else "",
                      normalize(" ".join([view.instruction, *(s.feedback for s in view.steps)])))
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
        if not frames and view.domain != "tools":
            flag("no_final_state", 0.5, "no screenshot of the final state")

        errors = [s for s in steps if s.error]
        if errors:
            tail = [s for s in errors if s.index >= len(steps) - 2]
            flag("feedback_error", 0.5 if tail else 0.2,
                 f"{len(errors)} action(s) answered with an error, e.g. {errors[-1].error[:80]!r}",
                 [s.index for s in errors])

        loop = _loop(view)
        if loop:
            flag("loop", 0.5, f"the same action repeated on an unchanged screen at steps {loop}", loop)

        missed = _missed_pointer(view)
        if missed:
            flag("no_effect", 0.25 * len(missed), f"pointer action(s) at steps {missed} changed nothing and "
                 "were not retried", missed)

        haystack = f"{ev.produced} {ev.final_screen}"
        missing = [v for v in expected_values(view.instruction) if not _contains(haystack, v)]
        if missing:
            flag("value_missing", 0.45 * min(len(missing), 2),
                 f"asked-for value(s) not typed, answered or on the final screen: {missing[:4]}")

        support = f"{ev.told} {ev.screens}"
        unsupported = [n for n in _numbers(" ".join(produced)) if not _contains(support, n)]
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
    """Step indices of the first run of ``repeats`` identical actions on one unchanged frame."""
    run: list[int] = []
    prev = None
    for s in view.steps:
        key = (_action_key(s.action), s.image_sha256)
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
        if not a or a["type"] not in _POINTER or not s.image_sha256 or s.image_sha256 != nxt.image_sha256:
            continue
        b = nxt.action or {}
        retried = b.get("type") == a["type"] and abs((b.get("x") or 0) - a["x"]) + abs((b.get("y") or 0) - a["y"]) < 200
        if not retried:
            missed.append(s.index)
    return missed
