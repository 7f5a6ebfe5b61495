"""The offline judge's false rejections of correct episodes, each found in a default run's
lake (verifier passed, judge rejected), and the planted failure next to each that must
still be caught."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from guiforge.judge.evidence import build_view
from guiforge.judge.offline import OfflineJudge, _number_in, _numbers, expected_values, number_forms


def _view(instruction: str, actions: list[tuple[dict, str | None, str]], apps=("bank",), domain="mobile"):
    """A trajectory of (action, element label, feedback) steps, each on its own frame."""
    steps = [{"step_index": i, "image_sha256": f"f{i}", "feedback": feedback, "error": None, "thought": "",
              "target_json": f'{{"role": "button", "label": "{label}"}}' if label else None, "action": action}
             for i, (action, label, feedback) in enumerate(actions)]
    view = build_view({"trajectory_id": "trj_1", "env_failure": False},
                      {"task_id": "t1", "domain": domain, "apps": list(apps), "max_steps": 20,
                       "instruction": instruction}, steps)
    view.key_frames = [(s["step_index"], s["image_sha256"]) for s in steps]
    return view


def test_cents_written_with_zeros_back_the_whole_amount_only():
    """'40,00 €' backs a typed 40 (it did not: the stem dropped every trailing zero, so the
    judge took it for 4) and no longer backs a typed 4."""
    assert _number_in("40", number_forms("Move 40,00 € into savings"))
    assert _number_in("100", number_forms("Transfer A$100.00"))
    assert not _number_in("4", number_forms("Move 40,00 € into savings"))
    assert not _number_in("1", number_forms("Transfer A$100.00"))
    assert _number_in("12.5", number_forms("12.50")) and not _number_in("12", number_forms("1,200"))


def test_cell_references_in_a_formula_are_not_numbers():
    """'=SUMIF(C2:C130;...)' types no value; a tab-separated amount in a tool's JSON still is one."""
    assert _numbers('=SUMIF(C2:C130;"Dining";D2:D130)\n') == []
    assert _numbers("AB12 and Q3") == []
    assert _numbers('"Day delegate catering\\t31\\t32,00 €\\t992,00 €"') == ["31", "32,00", "992,00"]


def test_values_given_as_examples_of_a_format_are_not_asked_for():
    cleaning = ("Tidy budget.csv: de-duplicate it, turn values like 1,234.50 or 12,50 € into 1234.50 / 12.50 "
                "and dates into YYYY-MM-DD. Overwrite the file with the clean version.")
    assert expected_values(cleaning) == []
    assert expected_values("Move 40,00 € to savings, e.g. for the holiday. Reference 'Rent 2'") == ["Rent 2", "40,00"]


def test_a_transfer_left_at_its_review_step_is_unfinished():
    """The skipped confirmation: typing the amount matches now, so the last control is what
    tells; 'Review transfer' leads to the commit and is not one, 'Confirm transfer' is."""
    steps = [({"type": "tap", "x": 1, "y": 1}, "Amount (GBP)", "tapped “Amount (GBP)”"),
             ({"type": "type", "text": "200"}, None, "typed 3 characters into “Amount (GBP)”"),
             ({"type": "tap", "x": 2, "y": 2}, "Review transfer", "tapped “Review transfer”")]
    done = ({"type": "tap", "x": 3, "y": 3}, "Confirm transfer", "tapped “Confirm transfer”")
    end = ({"type": "terminate", "status": "success"}, None, "episode ended")
    instruction = "Transfer £200.00 from Everyday Checking to Savings."
    stopped = OfflineJudge().judge(_view(instruction, [*steps, end]), {})
    assert not stopped.success and "unfinished" in stopped.flags, stopped.rationale
    confirmed = OfflineJudge().judge(_view(instruction, [*steps, done, end]), {})
    assert confirmed.success, confirmed.rationale


def test_typing_into_notes_reads_the_final_frame_even_with_nothing_missing():
    """The notes commit is the final screen showing the typed text, so that frame is read
    even when no asked-for value is missing (it was read only by chance before)."""
    view = _view("Write a summary of Ana's email into my Notes.",
                 [({"type": "tap", "x": 1, "y": 1}, "New note", "tapped “New note”"),
                  ({"type": "type", "text": "Ana moves the lunch to Friday"}, None, "typed into “Note body”"),
                  ({"type": "terminate", "status": "success"}, None, "episode ended")], apps=("notes",))
    judge = OfflineJudge()
    assert judge.frames_needed(view) == ["f2"]
    assert judge.judge(view, {"f2": "Notes Ana moves the lunch to Friday"}).success


def test_numbers_that_show_a_format_are_not_asked_for():
    for instruction in ("clean x.csv in place: no dupes, plain numbers (1234.50), dates YYYY-MM-DD",
                        "Bereinige x.csv: einfache Zahlen (1234.50) und Datumsangaben als YYYY-MM-DD.",
                        "vereinheitliche Zahlen und Daten (1234.50, YYYY-MM-DD). Gleiche Datei.",
                        "x.csv needs the usual cleanup: normalise numbers to 1234.50 and dates to YYYY-MM-DD."):
        assert expected_values(instruction) == [], instruction
    assert expected_values("Set the numbers in B2 to 17") == ["17"]  # a value, not a format


def test_a_time_moved_an_hour_later_is_backed_by_the_time_it_was():
    """The rescheduled end time is on no screen by design; the time it was, moved by the
    instruction's hour, is. A time off by anything else is still unsupported."""
    from guiforge.judge.shifts import shifts

    assert shifts("\"Team lunch\" am 27 March 2025 soll eine Stunde später anfangen und enden.") == [60]
    assert shifts("Décale \"Yoga\" d'une heure plus tard, même durée.") == [60]
    assert shifts("Move it 30 minutes earlier") == [-30]
    assert shifts("Book the 2 hours workshop") == []  # a length, not a move
    steps = [({"type": "tap", "x": 1, "y": 1}, "8:00 AM Dentist check-up", "tapped “8:00 AM Dentist check-up”"),
             ({"type": "type", "text": "09:00"}, None, "typed 5 characters into “Start”"),
             ({"type": "type", "text": "09:40"}, None, "typed 5 characters into “End”"),
             ({"type": "tap", "x": 2, "y": 2}, "Save", "tapped “Save”"),
             ({"type": "terminate", "status": "success"}, None, "episode ended")]
    instruction = 'Something came up: move my "Dentist check-up" on 29 December 2025 one hour later'
    screens = {"f0": "Dentist check-up 8:00 AM - 8:40 AM", "f4": "Dentist check-up 9:00 AM"}
    moved = OfflineJudge().judge(_view(instruction, steps, apps=("calendar",)), screens)
    assert moved.success, moved.rationale
    steps[2] = ({"type": "type", "text": "09:50"}, None, "typed 5 characters into “End”")
    wrong = OfflineJudge().judge(_view(instruction, steps, apps=("calendar",)), screens)
    assert "unsupported_value" in wrong.flags


FILE_MENU = Path(__file__).parent / "judge_frames" / "writer_file_menu.png"  # a default run's Writer frame, cropped


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="needs tesseract")
def test_a_mouse_save_on_the_desktop_is_read_off_the_menu_it_clicked():
    """LibreOffice records no element under a click, so File > Save by mouse looked like no
    commit at all (66 correct desktop episodes rejected in one default run). The judge now
    reads the line under such a closing click; leaving the menu without saving still fails."""
    from guiforge.judge.ocr import ScreenReader

    steps = [({"type": "type", "text": "The total is 213682.05."}, None, "type done"),
             ({"type": "click", "x": 9, "y": 19}, None, "click done"),  # File
             ({"type": "click", "x": 136, "y": 420}, None, "click done"),  # Save, on the open menu
             ({"type": "click", "x": 613, "y": 574}, None, "click done"),  # the format dialog
             ({"type": "terminate", "status": "success"}, None, "episode ended")]
    instruction = "Total party_budget.csv and write the result into a new last paragraph of invitation.docx, then save it."
    view = _view(instruction, steps, apps=("terminal", "writer"), domain="desktop")
    view.steps[2] = replace(view.steps[2], image_sha256="menu")
    judge = OfflineJudge()
    shown = {"f4": "The total amount in party_budget.csv is 213682.05."}
    assert "unfinished" in judge.judge(view, shown).flags  # what the judge saw before
    points = judge.points_needed(view)
    assert ("menu", 136, 420) in points
    under = ScreenReader(None).read_points(points, {"menu": FILE_MENU.read_bytes()})
    assert under[("menu", 136, 420)] == "Save"
    verdict = judge.judge(view, shown, under)
    assert verdict.success, verdict.rationale
    closed = _view(instruction, [steps[0], steps[1], ({"type": "key", "keys": ["escape"]}, None, "key done"), steps[-1]],
                   apps=("terminal", "writer"), domain="desktop")
    assert "unfinished" in judge.judge(closed, shown, under).flags


def test_a_tools_episode_that_opened_an_image_needs_no_final_screenshot():
    """tools.receipt_total_from_image: the receipt is the observation after open_image, the
    answer step has no image, and there is no screen whose final state could be shown."""
    instruction = "What is the total on the receipt receipt.png?"
    steps = [({"type": "call_tool", "text": '{"name": "open_image", "arguments": {"path": "receipt.png"}}'}, None,
              '{"handle": "img-1", "width": 600, "height": 900}'),
             ({"type": "call_tool", "text": '{"name": "ocr_image", "arguments": {"image": "img-1"}}'}, None,
              '{"text": "TOTAL 23.40"}'),
             ({"type": "answer", "answer": "The total is 23.40."}, None, "episode ended (answer)")]
    view = _view(instruction, steps, apps=(), domain="tools")
    view.steps[2] = replace(view.steps[2], image_sha256=None)
    assert OfflineJudge().judge(view, {}).success
    view.domain = "web"  # a GUI episode whose last frame is missing is still flagged
    assert "no_final_state" in OfflineJudge().judge(view, {}).flags


def test_a_year_in_a_file_name_is_not_an_asked_for_value():
    assert expected_values("Add up Amount for EDEKA in budget_2024.xlsx; the result belongs in F2. Save.") == []
    assert expected_values("Set the total in report_v3.docx to 1,250 and 75") == ["1,250", "75"]


def test_a_moved_end_time_is_backed_by_the_field_it_was_typed_over():
    """The event's end shows only in its edit form: the frame the agent typed the new end on
    is read for the time it had, an hour earlier. 'Shift ... by one hour' is a move too."""
    from guiforge.judge.shifts import shifts

    instruction = 'I am running late that day. Shift "Kick-off call" (16 July 2025) by one hour, start and end.'
    assert shifts(instruction) == [60]
    steps = [({"type": "tap", "x": 1, "y": 1}, "4:15 PM Kick-off call", "tapped “4:15 PM Kick-off call”"),
             ({"type": "type", "text": "17:15"}, None, "typed 5 characters into “Start”"),
             ({"type": "type", "text": "18:00"}, None, "typed 5 characters into “End”"),
             ({"type": "tap", "x": 2, "y": 2}, "Save", "tapped “Save”"),
             ({"type": "terminate", "status": "success"}, None, "episode ended")]
    view = _view(instruction, steps, apps=("calendar",))
    view.key_frames = [(0, "f0"), (4, "f4")]
    judge = OfflineJudge()
    assert "f2" in judge.frames_needed(view)
    screens = {"f0": "July 2025 4:15 PM Kick-off call", "f2": "Start 17:15 End 17:00 Save", "f4": "5:15 PM Kick-off"}
    assert judge.judge(view, screens).success
    screens["f2"] = "Start 17:15 End Save"  # the old end is nowhere: 18:00 backs on nothing
    assert "unsupported_value" in judge.judge(view, screens).flags


def test_a_desktop_save_left_at_the_keep_format_question_is_unfinished():
    """The teacher's planted skipped confirmation: Ctrl+S (or File > Save) and then nothing,
    so LibreOffice's "Keep current format?" still waits and the file is unchanged."""
    instruction = "Put the total into F2 of budget.xlsx as a formula and save it."
    typed = ({"type": "type", "text": '=SUM(D2:D40)\n'}, None, "type done")
    save = ({"type": "hotkey", "keys": ["ctrl", "s"]}, None, "hotkey done")
    wait = ({"type": "wait", "amount": 1}, None, "waited")
    keep = ({"type": "key", "keys": ["enter"]}, None, "key done")
    end = ({"type": "terminate", "status": "success"}, None, "episode ended")
    judge = OfflineJudge()
    left = judge.judge(_view(instruction, [typed, save, wait, end], apps=("calc",), domain="desktop"), {})
    assert "unfinished" in left.flags
    kept = judge.judge(_view(instruction, [typed, save, wait, keep, end], apps=("calc",), domain="desktop"), {})
    assert kept.success, kept.rationale


def test_a_value_copied_from_another_app_is_backed_by_the_screen_left_behind():
    """mail.email_note: the note is open on the screen the agent leaves for Mail, which is
    not a key frame; that frame is read. A changed digit is still caught."""
    instruction = 'Email my note "Move to-do" to Alexander Thomas; put the note\'s text in the message.'
    steps = [({"type": "open_app", "app": "notes"}, None, "opened notes"),
             ({"type": "tap", "x": 1, "y": 1}, "Move to-do", "tapped “Move to-do”"),
             ({"type": "open_app", "app": "mail"}, None, "opened mail"),
             ({"type": "tap", "x": 2, "y": 2}, "Message body", "tapped “Message body”"),
             ({"type": "type", "text": "Movers: total $1,509.02, boxes packed: 40"}, None, "typed into “Message body”"),
             ({"type": "tap", "x": 3, "y": 3}, "Send", "tapped “Send”"),
             ({"type": "terminate", "status": "success"}, None, "episode ended")]
    view = _view(instruction, steps, apps=("notes", "mail"))
    view.key_frames = [(3, "f3"), (6, "f6")]
    judge = OfflineJudge()
    assert "f2" in judge.frames_needed(view)
    screens = {"f2": "Move to-do Movers: total $1,509.02 Boxes packed: 40", "f3": "New message", "f6": "Inbox"}
    assert judge.judge(view, screens).success
    steps[4] = ({"type": "type", "text": "Movers: total $1,509.07, boxes packed: 40"}, None, "typed")
    assert "unsupported_value" in judge.judge(_view(instruction, steps, apps=("notes", "mail")), screens).flags
