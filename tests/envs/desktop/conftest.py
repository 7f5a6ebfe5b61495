from __future__ import annotations

import io
import shutil

import pytest

from guiforge.envs import Criterion, EnvSpec, TaskSpec
from guiforge.envs.desktop import DesktopEnv

NEEDED = ("Xvfb", "xdotool", "bwrap", "soffice")
missing = [tool for tool in NEEDED if shutil.which(tool) is None]
if missing:
    pytest.skip(f"desktop tests need {', '.join(missing)} (apt-get install xvfb xdotool "
                "bubblewrap libreoffice-calc libreoffice-writer)", allow_module_level=True)


@pytest.fixture(scope="session")
def xlsx_bytes() -> bytes:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Sales"
    for row in (["Region", "Q1", "Q2"], ["North", 10, 20], ["South", 30, 40]):
        ws.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


@pytest.fixture(scope="session")
def docx_bytes() -> bytes:
    from docx import Document

    doc = Document()
    doc.add_paragraph("Quarterly memo")
    doc.add_paragraph("Revenue grew in the North region.")
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def make_task(task_id: str, setup: dict, rubric: list | None = None) -> TaskSpec:
    return TaskSpec(task_id=task_id, domain="desktop", instruction="test", setup=setup,
                    rubric=[Criterion(id=f"c{i}", check=c) for i, c in enumerate(rubric or [])])


@pytest.fixture(scope="session")
def task():
    return make_task


@pytest.fixture(scope="module")
def hybrid_env():
    env = DesktopEnv(EnvSpec(domain="desktop", variant="hybrid"))
    env.start()
    try:
        yield env
    finally:
        env.kill()


@pytest.fixture
def terminal_env():
    env = DesktopEnv(EnvSpec(domain="desktop", variant="terminal"))
    env.start()
    try:
        yield env
    finally:
        env.kill()
