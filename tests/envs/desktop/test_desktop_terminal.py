"""The terminal-only desktop variant (its frames: the terminal window), the setup spec and
the action mapping: no X server, no LibreOffice, so these run in well under a second each."""

from __future__ import annotations

import base64
import io
import shutil
import subprocess

import pytest
from PIL import Image, ImageColor

from guiforge.envs import Action
from guiforge.envs.desktop.setup import DesktopSetup
from guiforge.envs.desktop.terminal_screen import PALETTES
from guiforge.envs.desktop.xinput import chord, xdotool_args, xdotool_commands
from guiforge.envs.kinds import kind_of
from guiforge.verify import score_rubric

BROKEN_CSV = "name;amount\nalice;10\nbob;20\n"


def _png(obs) -> Image.Image:
    assert obs.screenshot is not None and obs.format == "png"
    return Image.open(io.BytesIO(obs.screenshot))


def test_terminal_task_fixes_a_csv(terminal_env, task):
    t = task("csv-fix", {"files": {"data/sales.csv": {"text": BROKEN_CSV}}},
             rubric=[{"fn": "csv_cell_equals", "path": "data/sales.csv", "row": 1,
                      "column": "amount", "value": 20},
                     {"fn": "terminal_output_contains", "text": "alice,10"}])
    obs = terminal_env.reset(t)
    assert obs.text == "" and _png(obs).size == (obs.width, obs.height)  # the terminal window, 80x24
    assert not score_rubric(t.rubric, terminal_env.final_state()).success
    step = terminal_env.step(Action(type="bash", text="cd data && sed -i 's/;/,/g' sales.csv && cat sales.csv"))
    assert step.error is None and step.observation.text == "name,amount\nalice,10\nbob,20\n"
    # the step's frame is the window now: the command typed at the prompt, its output, the next prompt
    shown, cursor = terminal_env.screen.visible()
    assert ["".join(c for c, _, _ in line) for line in shown] == [
        "agent@sandbox:~$ cd data && sed -i 's/;/,/g' sales.csv && cat sales.csv",
        "name,amount", "alice,10", "bob,20", "agent@sandbox:~/data$ "]
    assert cursor == (22, 4) and step.observation.screenshot != obs.screenshot
    if shutil.which("tesseract"):  # what the offline judge reads off the frame
        read = subprocess.run(["tesseract", "stdin", "stdout", "--psm", "11"], input=step.observation.screenshot,
                              capture_output=True, check=True).stdout.decode()
        assert "alice,10" in read.replace(", ", ",") and "agent@sandbox:~/data$" in read
    state = terminal_env.final_state()
    assert state.terminal[0]["command"].startswith("cd data") and state.terminal[0]["exit_code"] == 0
    assert score_rubric(t.rubric, state).success
    # reset restores the original file and forgets the history
    terminal_env.reset(t)
    state = terminal_env.final_state()
    assert (state.workspace / "data" / "sales.csv").read_text() == BROKEN_CSV
    assert state.terminal == [] and not score_rubric(t.rubric, state).success


def test_failed_commands_are_feedback_not_the_end(terminal_env, task):
    # in the task's drawn terminal look: its grid and colours
    look = next(p for i in range(50) if (p := kind_of("desktop").presentation(f"tsk_{i}", 1, "terminal")).terminal
                and p.terminal.cols == 100).as_dict()
    first = terminal_env.reset(task("errors", {"files": {"a.txt": b"x"}}).model_copy(update={"presentation": look}))
    assert terminal_env.screen.size == _png(first).size and (terminal_env.screen.cols, terminal_env.screen.rows) == (100, 30)
    assert _png(first).getpixel((first.width // 2, first.height - 3)) == ImageColor.getrgb(
        PALETTES[look["theme"]["name"]].background)
    failed = terminal_env.step(Action(type="bash", text="cat missing.txt"))
    assert not failed.done and failed.error.startswith("exit code 1: ")
    assert "No such file or directory" in failed.error
    assert terminal_env.step(Action(type="bash", text="cd /tmp")).error is None
    ended = terminal_env.step(Action(type="bash", text="exit 4"))
    assert "fresh shell" in ended.feedback and ended.error.startswith("exit code 4")
    again = terminal_env.step(Action(type="bash", text="pwd; cat /workspace/a.txt"))
    assert again.error is None and again.observation.text == "/tmp\nx"
    wrong = terminal_env.step(Action(type="click", x=10, y=10))
    assert "not in the desktop/terminal action set" in wrong.error and not wrong.done
    done = terminal_env.step(Action(type="answer", text="42"))
    assert done.done and terminal_env.final_state().answer == "42"
    assert [h["exit_code"] for h in terminal_env.final_state().terminal] == [1, 0, 4, 0]
    frames = [_png(r.observation).size for r in (failed, ended, again, wrong, done)]  # a frame for every step
    assert set(frames) == {_png(first).size} and wrong.observation.screenshot == again.observation.screenshot


def test_setup_spec_sources(tmp_path):
    host = tmp_path / "logo.bin"
    host.write_bytes(b"\x00\x01")
    setup = DesktopSetup.from_task({"files": {
        "a.bin": b"raw", "b.txt": {"text": "hé"}, "c.bin": {"base64": base64.b64encode(b"b64").decode()},
        "d.bin": {"path": str(host)}, "e.bin": str(host), "report.xlsx": b"PK"},
        "open": "report.xlsx"}, apps=[])
    assert setup.load_files(files_root=tmp_path) == {
        "a.bin": b"raw", "b.txt": "hé".encode(), "c.bin": b"b64", "d.bin": b"\x00\x01", "e.bin": b"\x00\x01",
        "report.xlsx": b"PK"}
    with pytest.raises(ValueError, match="no prepared-files root"):
        setup.load_files()  # host files only from a run's prepared-files root
    assert setup.app == "calc"
    assert DesktopSetup.from_task({}, apps=["libreoffice_impress"]).app == "impress"
    with pytest.raises(ValueError, match="relative path"):
        DesktopSetup.from_task({"files": {"../escape.txt": b"x"}}, apps=[])
    with pytest.raises(ValueError, match="not one of setup.files"):
        DesktopSetup.from_task({"files": {"a.txt": b"x"}, "open": "b.xlsx"}, apps=[])
    with pytest.raises(ValueError, match="outside the prepared-files root"):
        DesktopSetup.from_task({"files": {"a.txt": "/etc/passwd"}}, apps=[]).load_files(files_root=tmp_path)
    with pytest.raises(ValueError, match="extra"):
        DesktopSetup.from_task({"file": {}}, apps=[])


def test_actions_map_to_xdotool():
    assert chord(["ctrl", "s"]) == "ctrl+s" and chord(["Ctrl+Shift+s"]) == "ctrl+shift+s"
    assert chord(["enter"]) == "Return" and chord(["f5"]) == "F5" and chord(["cmd", "+"]) == "super+plus"
    assert xdotool_args(Action(type="click", x=999, y=0), 1280, 720) == ["mousemove", "1279", "0", "click", "1"]
    assert xdotool_args(Action(type="double_click", x=0, y=999), 1280, 720)[-1] == "1"
    assert xdotool_args(Action(type="right_click", x=500, y=500), 1280, 720)[-1] == "3"
    scroll = xdotool_args(Action(type="scroll", direction="down", amount=2), 1280, 720)
    assert scroll == ["click", "--repeat", "2", "--delay", "20", "5"]
    drag = xdotool_args(Action(type="drag", x=0, y=0, x2=999, y2=999), 1280, 720)
    assert drag[:5] == ["mousemove", "0", "0", "mousedown", "1"] and "1279" in drag and drag[-2:] == ["mouseup", "1"]
    assert xdotool_args(Action(type="type", text="-n"), 100, 100)[-2:] == ["--", "-n"]
    typed = xdotool_commands(Action(type="type", text="a\tb\r\nc\n"), 100, 100)
    assert [c[0] if c[0] == "type" else c[1] for c in typed] == ["type", "Tab", "type", "Return", "type", "Return"]
    assert [c[-1] for c in typed if c[0] == "type"] == ["a", "b", "c"]
