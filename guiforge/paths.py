"""Where the project's files are. guiforge runs from its checkout (pip install -e .), so
the data folders sit next to the package; GUIFORGE_HOME points elsewhere if needed."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(os.environ.get("GUIFORGE_HOME") or Path(__file__).resolve().parent.parent)
DATA_DIR = PROJECT_ROOT / "data"
SCENARIOS_DIR = DATA_DIR / "scenarios"
SKILLS_DIR = PROJECT_ROOT / "skills"
DEFAULT_PIPELINE = PROJECT_ROOT / "pipeline.yaml"
