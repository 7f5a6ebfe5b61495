"""Real LibreOffice on Xvfb, driven with xdotool: edit, save through the keep-format dialog,
verify from the file on disk, reset, and crash replacement through the manager. Few tests,
each doing a whole episode, because every LibreOffice launch costs about a second."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import time

import pytest
from docx import Document
from PIL import Image

from guiforge.envs import Action, EnvFailure, EnvManager, EnvSpec, to_grid
from guiforge.envs.desktop import DesktopEnv
from guiforge.envs.sandbox.procs import pids_of_user
from guiforge.verify import score_rubric

W, H = 1280, 720
CELL_D2 = to_grid(331, 153, W, H)  # column D, row 2 of Calc's grid at 100% zoom
D2_IS_30 = {"fn": "xlsx_cell_equals", "path": "report.xlsx", "cell": "D2", "value": 30}


def click(x: int, y: int) -> Action:
    return Action(type="click", x=x, y=y)


def save_keeping_format(env: DesktopEnv) -> None:
    env.step(Action(type="hotkey", keys=["ctrl", "s"]))
    _wait_for_window(env, "Confirm File Format")
    # the dialog's default button is "Use Excel 2007-365!" / "Use Word 2007-365!"
    env.step(Action(type="key", keys=["enter"]))
    _wait_for_window(env, "Confirm File Format", gone=True)


def _wait_for_window(env: DesktopEnv, title: str, gone: bool = False, timeout_s: float = 15) -> None:
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        if (title in env.x.window_names()) != gone:
            return
        time.sleep(0.05)
    raise AssertionError(f"window {title!r} {'still shows' if gone else 'never showed'}: "
                         f"{env.x.window_names()}")


def _explain(env: DesktopEnv, tmp_path) -> str:
    """What the screen and the workspace looked like, for a failure message."""
    shot = tmp_path / "screen.png"
    shot.write_bytes(env.x.png(env.x.grab()))
    files = sorted(p.name for p in env.workspace.path.iterdir())
    return f"windows={env.x.window_names()} files={files} screenshot={shot}"


def _idle_stamp(env: DesktopEnv, timeout_s: float = 30) -> str:
    """The state stamp once LibreOffice is idle: it is None while any of its threads runs (a
    timer, a blink, input not handled yet), which a loaded machine makes last a while."""
    until = time.monotonic() + timeout_s
    while (stamp := env.state_stamp()) is None:
        assert time.monotonic() < until, "LibreOffice never went idle"
        time.sleep(0.05)
    return stamp


def test_calc_edit_counts_only_once_saved_and_reset_restores(hybrid_env, task, xlsx_bytes, tmp_path):
    env = hybrid_env
    t = task("calc-d2", {"files": {"report.xlsx": xlsx_bytes}, "open": "report.xlsx"}, [D2_IS_30])
    obs = env.reset(t)
    assert (obs.width, obs.height) == (W, H)
    assert Image.open(io.BytesIO(obs.screenshot)).size == (W, H)
    assert not score_rubric(t.rubric, env.final_state()).success

    stamp = _idle_stamp(env)  # what per-step progress compares before reading the whole state
    env.step(click(*CELL_D2))
    typed = env.step(Action(type="type", text="30\n"))
    assert typed.error is None
    # typed but not saved: the file on disk is unchanged, so the task is not done
    assert not score_rubric(t.rubric, env.final_state()).success
    assert _idle_stamp(env) == stamp
    save_keeping_format(env)
    assert score_rubric(t.rubric, env.final_state()).success, _explain(env, tmp_path)
    assert _idle_stamp(env) != stamp

    # hybrid: the terminal sees the saved file; LibreOffice stays up
    listing = env.step(Action(type="bash", text="ls report.xlsx && id -un"))
    assert listing.observation.text == "report.xlsx\nagent\n"
    assert listing.observation.screenshot is not None

    env.reset(t)
    state = env.final_state()
    assert (state.workspace / "report.xlsx").read_bytes() == xlsx_bytes
    assert not score_rubric(t.rubric, state).success


def test_writer_edit_saved_as_docx(hybrid_env, task, docx_bytes, tmp_path):
    env = hybrid_env
    t = task("writer-approve", {"files": {"memo.docx": docx_bytes}, "open": "memo.docx"},
             [{"fn": "docx_contains", "path": "memo.docx", "text": "Approved by Dana"}])

    env.reset(t)
    assert not score_rubric(t.rubric, env.final_state()).success
    env.step(Action(type="hotkey", keys=["ctrl", "end"]))  # cursor to the end of the text
    env.step(Action(type="type", text="\nApproved by Dana"))
    save_keeping_format(env)
    result = score_rubric(t.rubric, env.final_state())
    paragraphs = [p.text for p in Document(str(env.workspace.path / "memo.docx")).paragraphs]
    assert result.success, (paragraphs, _explain(env, tmp_path))
    assert paragraphs[-1] == "Approved by Dana"  # the typed newline started a paragraph


def test_typing_characters_the_keyboard_map_lacks(hybrid_env, task, docx_bytes, tmp_path):
    """Names from the worlds' locales (ó, ł, ż, Æ, ø, ü, Ç) are typed exactly: each gets a
    keycode of its own before it is typed (guiforge.envs.desktop.keymap), instead of
    xdotool's scratch key that LibreOffice can read after it was unbound."""
    env = hybrid_env
    name = "Zatwierdził Józef Żółkiewski, Ærø Müller, Çelik"
    t = task("writer-names", {"files": {"memo.docx": docx_bytes}, "open": "memo.docx"},
             [{"fn": "docx_contains", "path": "memo.docx", "text": name}])
    env.reset(t)
    env.step(Action(type="hotkey", keys=["ctrl", "end"]))
    env.step(Action(type="type", text="\n" + name))
    save_keeping_format(env)
    paragraphs = [p.text for p in Document(str(env.workspace.path / "memo.docx")).paragraphs]
    assert paragraphs[-1] == name, (paragraphs[-1], _explain(env, tmp_path))
    wanted = {ch for ch in name if ord(ch) > 0x7E}
    if env.x.keys.available:  # xmodmap (x11-xserver-utils), installed by bootstrap
        assert wanted <= set(env.x.keys.bound)
        listing = subprocess.run(["xmodmap", "-pke"], env=env.x.env(), capture_output=True, text=True).stdout
        assert re.search(rf"^keycode +{env.x.keys.bound['ó']} = oacute ", listing, re.M), listing


def test_hybrid_bash_fix_is_what_the_verifier_reads(hybrid_env, task):
    env = hybrid_env
    t = task("csv-hybrid", {"files": {"sales.csv": {"text": "name;amount\nalice;10\n"}},
                            "open": "sales.csv"},
             [{"fn": "csv_cell_equals", "path": "sales.csv", "row": 0, "column": "amount", "value": 10}])
    obs = env.reset(t)
    assert obs.screenshot is not None and obs.text == ""
    assert not score_rubric(t.rubric, env.final_state()).success
    fixed = env.step(Action(type="bash", text="sed -i 's/;/,/g' sales.csv"))
    assert fixed.error is None
    state = env.final_state()
    assert state.terminal[-1]["command"] == "sed -i 's/;/,/g' sales.csv"
    assert score_rubric(t.rubric, state).success
    # the terminal cannot reach the X server to drive the GUI behind the agent's back
    probe = env.step(Action(type="bash", text="ls /tmp/.X11-unix; xdotool getmouselocation"))
    assert probe.error is not None and "No such file or directory" in probe.observation.text


def _soffice_pids(env: DesktopEnv) -> list[int]:
    pids = []
    for pid in pids_of_user(env.sandbox.user.uid):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "soffice.bin":
                    pids.append(pid)
        except OSError:
            continue
    return pids


@pytest.mark.skipif(os.geteuid() != 0, reason="finds soffice.bin by its dedicated sandbox uid")
def test_manager_replaces_a_desktop_whose_apps_crash(task, xlsx_bytes):
    t = task("crash", {"files": {"report.xlsx": xlsx_bytes}, "open": "report.xlsx"}, [D2_IS_30])
    spec = EnvSpec(domain="desktop", variant="gui")
    with EnvManager({"desktop": DesktopEnv}, max_instances=1) as manager:
        lease = manager.acquire(spec)
        lease.reset(t)
        first = lease.env
        for pid in _soffice_pids(first):
            os.kill(pid, signal.SIGKILL)
        with pytest.raises(EnvFailure, match="LibreOffice died"):
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # the kill lands asynchronously
                lease.step(click(*CELL_D2))
        lease.release()
        assert manager.stats.replaced == 1

        lease = manager.acquire(spec)
        assert lease.env is not first
        lease.reset(t)
        second = lease.env
        os.kill(second.x._proc.pid, signal.SIGKILL)  # the X server itself goes away
        second.x._proc.wait(timeout=10)
        with pytest.raises(EnvFailure, match="X server"):
            lease.observe()
        lease.release()
        assert manager.stats.replaced == 2

        with manager.acquire(spec) as lease:
            obs = lease.reset(t)
            assert obs.screenshot is not None
            verdict = lease.evaluate()  # through the out-of-process verifier
            assert verdict.criteria == {"c0": 0} and not verdict.success


def test_reset_hands_the_document_to_the_next_libreoffice(hybrid_env, task, xlsx_bytes):
    """While an episode runs, the next LibreOffice starts (its own sandbox, a fresh copy of
    the profile) and the reset hands it the document over its pipe: every episode gets a
    new process, nothing an episode wrote into its profile reaches a later one, and the
    reset's clean-up (killing what the episode left running) spares the waiting one."""
    env = hybrid_env
    t = task("spare", {"files": {"report.xlsx": xlsx_bytes}, "open": "report.xlsx"}, [D2_IS_30])
    episodes = []
    for episode in range(3):
        obs = env.reset(t)
        office = env.office
        profile = office._in_use[id(office._box)]
        assert not (profile / "episode-marker").exists(), f"episode {episode} got a used profile"
        (profile / "episode-marker").write_text(str(episode))
        episodes.append((office._box.init_pid, office.warm))
        assert obs.screenshot is not None and not score_rubric(t.rubric, env.final_state()).success
        time.sleep(1.5)  # the episode: the next LibreOffice comes up meanwhile
    assert len({pid for pid, _ in episodes}) == 3
    assert [warm for _, warm in episodes[1:]] == [True, True]
    # the document really is open in the handed-over LibreOffice: an edit saves into the file
    env.step(click(*CELL_D2))
    env.step(Action(type="type", text="30\n"))
    save_keeping_format(env)
    assert score_rubric(t.rubric, env.final_state()).success


def test_uitars_arrow_keys_move_the_cell_cursor_and_unknown_keys_fail(hybrid_env, task, xlsx_bytes, tmp_path):
    """UI-TARS's hotkey(key='arrowdown') moves Calc's cell cursor (it was `xdotool key
    arrowdown`: exit 0, nothing pressed, the next value typed into the same cell); a key X
    does not know is an error on the step, never a step that looks done."""
    from guiforge.harness.formats import get_format

    rubric = [D2_IS_30, {"fn": "xlsx_cell_equals", "path": "report.xlsx", "cell": "D3", "value": 40}]
    t = task("calc-keys", {"files": {"report.xlsx": xlsx_bytes}, "open": "report.xlsx"}, rubric)
    env = hybrid_env
    env.reset(t)
    env.step(click(*CELL_D2))
    env.step(Action(type="type", text="30"))
    _, down = get_format("uitars").decode("Thought: next row\nAction: hotkey(key='arrowdown')", "desktop", "hybrid",
                                          frame=(W, H), coords="resized")
    assert down == Action(type="key", keys=["down"]) and env.step(down).error is None
    env.step(Action(type="type", text="40\n"))
    save_keeping_format(env)
    assert score_rubric(t.rubric, env.final_state()).success, _explain(env, tmp_path)
    failed = env.step(Action(type="hotkey", keys=["ctrl", "hyper"]))  # past the codec, which refuses it
    assert failed.error and "unknown key 'hyper'" in failed.error and not failed.done
