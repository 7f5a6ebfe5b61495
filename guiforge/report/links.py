"""Links from the report into ``guiforge view``: the rows behind a figure or a count. The
viewer serves the lake the report was written from; its address is
``GUIFORGE_VIEWER_URL`` (default http://127.0.0.1:8765, where `guiforge view` listens)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import quote, urlencode

DEFAULT_VIEWER = "http://127.0.0.1:8765"


@dataclass(frozen=True)
class Links:
    base: str
    run_id: str | None  # the report's run, added to every link (None: every run)

    @classmethod
    def default(cls, run_id: str | None) -> Links:
        return cls((os.environ.get("GUIFORGE_VIEWER_URL") or DEFAULT_VIEWER).rstrip("/"), run_id)

    def rows(self, table: str, **filters) -> str:
        params = {"run": self.run_id, **filters}
        query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
        return f"{self.base}/rows/{table}" + (f"?{query}" if query else "")

    def trajectory(self, trajectory_id: str, run_id: str | None = None) -> str:
        run = run_id or self.run_id or ""
        return f"{self.base}/trajectory/{quote(run)}/{quote(trajectory_id)}" if run else self.rows(
            "trajectories", trajectory=trajectory_id)

    def run(self) -> str:
        return f"{self.base}/run/{quote(self.run_id)}" if self.run_id else f"{self.base}/"
