"""Content that tries to escape through the data: a card whose templates reach for Python
(Jinja's sandbox stops them), card and world strings carrying HTML/JS, shell metacharacters
and ``../``. A real run through the CLI (personas, worlds, skills, task candidates), then the
report: nothing executes, nothing is written outside the lake, the HTML shows the text as
text, and a template that reaches for Python is an exclusion with its reason, not a crash."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from guiforge.paths import DATA_DIR, PROJECT_ROOT, SKILLS_DIR
from guiforge.report.page import PLOTLY_ASSET

pytestmark = pytest.mark.slow

MARKER = Path("/tmp/guiforge-escape-marker")
SHELL = f"$(touch {MARKER}) `touch {MARKER}`; touch {MARKER} && echo | tee {MARKER}"
HTML = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"
SSTI = [
    "{{ cycler.__init__.__globals__.os.system('touch " + str(MARKER) + "') }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ person.__class__.__init__.__globals__['sys'].modules['os'].system('touch " + str(MARKER) + "') }}",
    "{% for c in [].__class__.__base__.__subclasses__() %}{{ c }}{% endfor %}",
]


def hostile_card(folder: Path, name: str, instructions: list[str]) -> None:
    text = (SKILLS_DIR / "contacts" / "phone_info.yaml").read_text().replace("id: contacts.phone_info",
                                                                             f"id: contacts.{name}")
    start = text.index("instructions:")
    end = text.index("setup:")
    body = "instructions:\n" + "".join(f"  - {json.dumps(i)}\n" for i in instructions)
    (folder / "contacts").mkdir(parents=True, exist_ok=True)
    (folder / "contacts" / f"{name}.yaml").write_text(text[:start] + body + text[end:])


def test_escapes_through_cards_and_worlds_execute_nothing(tmp_path):
    MARKER.unlink(missing_ok=True)
    home = tmp_path / "home"
    shutil.copytree(DATA_DIR, home / "data")
    (home / "skills").symlink_to(SKILLS_DIR)
    # world strings: a scenario whose title and summary carry HTML/JS, shell and ../
    scenario = (home / "data" / "scenarios" / "conference_trip.yaml")
    scenario.write_text(scenario.read_text().replace(
        'title: "Speaking at', f'title: "{HTML} {SHELL} ../../../../tmp/x Speaking at', 1))
    cards = tmp_path / "cards"
    hostile_card(cards, "shell_html", [f"What's {{{{ person.name }}}}'s number? {HTML} {SHELL} ../../../etc/passwd",
                                       f"Call {{{{ person.name }}}}: {SHELL} {HTML}"])
    hostile_card(cards, "ssti", SSTI)
    config = tmp_path / "escape.json"
    config.write_text(json.dumps({
        "name": "escape", "seed": 2, "workers": 2, "models": {"world_builder": {"provider": "offline"}},
        "stages": {"personas": {"count": 3, "shard_size": 3}, "worlds": {"scenarios": ["conference_trip"]},
                   "skills": {"dir": str(cards)}, "task_candidates": {"per_world": 4}}}))
    lake = tmp_path / "lake"
    env = {**os.environ, "GUIFORGE_HOME": str(home)}
    done = subprocess.run([sys.executable, "-m", "guiforge.cli", "run", str(config), "--lake", str(lake),
                           "--executor", "local"], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "Traceback" not in output
    assert not MARKER.exists(), "a template or string executed a command"

    con = duckdb.connect()
    tasks = con.execute(f"SELECT skill_id, instruction FROM '{lake}/task_candidates/*/*.parquet'").fetchall()
    reasons = con.execute(f"SELECT subject_id, reason FROM '{lake}/exclusions/*/*.parquet' "
                          "WHERE stage = 'task_candidates'").fetchall()
    shell_tasks = [i for s, i in tasks if s == "contacts.shell_html"]
    assert shell_tasks and all(SHELL in i and HTML in i for i in shell_tasks), shell_tasks[:2]  # text, kept as text
    assert not [i for s, i in tasks if s == "contacts.ssti"], "a template reaching for Python rendered a task"
    titles = [t for (t,) in con.execute(f"SELECT title FROM '{lake}/worlds/*/*.parquet'").fetchall()]
    assert titles and all(HTML in t and SHELL in t for t in titles), titles[:2]
    ssti = [r for subject, r in reasons if "contacts.ssti" in subject]
    assert ssti and all("unsafe" in r or "not safely" in r or "undefined" in r or "access" in r for r in ssti), ssti[:3]

    report = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "guiforge.cli", "report", "--lake", str(lake), "--out", str(report)],
                          cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    html = report.read_text()
    assert "<script>document.title='pwned'</script>" not in html and "<img src=x onerror" not in html
    assert not MARKER.exists()
    outside = {p.name for p in tmp_path.iterdir()}
    # the report's plotly.js lies beside it by design (guiforge.report.page.PLOTLY_ASSET)
    assert outside <= {"home", "cards", "escape.json", "lake", "report.html", PLOTLY_ASSET}, outside
    assert not Path("/tmp/x").exists()
