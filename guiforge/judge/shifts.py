"""Times an instruction asks to move by ("one hour later", "eine Stunde später"), so that a
typed 09:40 counts as backed by the 8:40 a screen shows when the task moves it an hour on.

The offline judge checks that every number the agent types is backed by something it was
told or shown; a rescheduled time is the one number that is, by design, on no screen.
"""

from __future__ import annotations

import re

_COUNT = {"one": 1, "an": 1, "a": 1, "1": 1, "eine": 1, "einer": 1, "une": 1, "una": 1, "un": 1, "un'": 1,
          "two": 2, "2": 2, "zwei": 2, "deux": 2, "dos": 2, "due": 2, "half an": 0.5, "half a": 0.5,
          "three": 3, "3": 3, "drei": 3, "trois": 3, "tres": 3, "tre": 3}
_UNIT = r"(?:h\b|hours?|stunden?|heures?|horas?|ora|ore)"
_SHIFT = re.compile(rf"(?i)(?<!\w)(half an?|\d+|one|an|a|two|three|eine[r]?|zwei|drei|une|deux|trois|una|dos|tres|"
                    rf"un'|un|due|tre)\s*{_UNIT}|(?<!\w)(\d+)\s*(?:min\b|minutes?|minuten|minutos|minuti)")
_EARLIER = re.compile(r"(?i)\b(?:earlier|sooner|forward|früher|vorziehen|plus tôt|avancer|antes|más temprano|prima)\b")
# a move, not a length ("the 2 hours meeting"): a word that says which way
_MOVE = re.compile(r"(?i)\b(?:later|back|earlier|sooner|forward|shift\w*|move|reschedul\w*|später|früher|verschieb\w*|"
                   r"tard|tôt|décal\w*|tarde|temprano|tardi|prima|sposta\w*)\b")
_CLOCK = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*$")


def shifts(instruction: str) -> list[int]:
    """The minutes the instruction moves a time by (negative: earlier); empty if none."""
    if not _MOVE.search(instruction):
        return []
    sign = -1 if _EARLIER.search(instruction) else 1
    out = []
    for m in _SHIFT.finditer(instruction):
        if m.group(1):
            out.append(sign * round(60 * _COUNT.get(m.group(1).lower(), 0) if not m.group(1).isdigit()
                                    else 60 * int(m.group(1))))
        else:
            out.append(sign * int(m.group(2)))
    return [minutes for minutes in dict.fromkeys(out) if minutes]


def unshifted(value: str, minutes: int) -> list[str]:
    """The digit forms of the clock time ``value`` before a move by ``minutes``: '09:40'
    moved by 60 -> ['0840', '840']; empty if ``value`` is not a clock time."""
    m = _CLOCK.match(value)
    if not m:
        return []
    total = (int(m.group(1)) * 60 + int(m.group(2)) - minutes) % (24 * 60)
    hour, minute = divmod(total, 60)
    return [f"{hour:02d}{minute:02d}", f"{hour}{minute:02d}"]
