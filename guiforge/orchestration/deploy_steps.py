"""Prefect deployment steps of guiforge's own (named in prefect.yaml's ``pull``).

A deployment must run on any worker host, not only on the machine where ``prefect deploy``
was typed: so it carries no path. At run time :func:`use_installed_checkout` moves the flow
run into the guiforge checkout installed on the worker host (``scripts/worker-host.sh``
makes one: apt packages, a clone, its .venv), where the entrypoint, skills and data are.
"""

from __future__ import annotations

import os

from guiforge.errors import GuiforgeError
from guiforge.paths import PROJECT_ROOT

ENTRYPOINT = "flows/dag.py"


def use_installed_checkout() -> dict[str, str]:
    """Change into this host's guiforge checkout; Prefect reads the entrypoint from there.
    Returns the step's output (``directory``), as Prefect's own steps do."""
    if not (PROJECT_ROOT / ENTRYPOINT).is_file():
        raise GuiforgeError(f"this worker's guiforge ({PROJECT_ROOT}) is not a checkout with {ENTRYPOINT}: install "
                            "it from a clone with scripts/worker-host.sh (or set GUIFORGE_HOME to one)")
    os.chdir(PROJECT_ROOT)
    return {"directory": str(PROJECT_ROOT)}
