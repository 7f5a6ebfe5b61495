"""The htmlbench environment kind: guiforge serves this package's pages (a directory the kind
declares; the browser cannot reach a server of ours on the host's loopback) and the reward is
graded by how close the submitted answer is."""

from __future__ import annotations

from guiforge.envs import FinalState, TaskSpec
from guiforge.envs.site_kind import SiteKind


def closeness(submitted: object, target: float, tolerance: float) -> tuple[float, str]:
    """1.0 for the exact answer, falling linearly to 0 at ``tolerance`` (relative) away."""
    try:
        value = float(str(submitted).replace(",", "").strip())
    except ValueError:
        return 0.0, f"{submitted!r} is not a number"
    error = abs(value - target) / max(abs(target), 1e-9)
    return round(max(0.0, 1.0 - error / tolerance), 4), f"answered {value}, expected {target} ({error:.1%} off)"


class HtmlBenchKind(SiteKind):
    domain = "htmlbench"
    surface = "a web page with a unit converter form"
    pages = "guiforge_htmlbench:pages"
    success_at = 0.9  # a task without a rubric succeeds from this reward up

    def evaluate(self, task: TaskSpec, state: FinalState) -> tuple[float, str] | None:
        """The graded reward: how close the submitted answer is (runs in the verifier worker)."""
        page = (state.apps.get("site") or {}).get("page") or {}
        if page.get("submitted") is None:
            return 0.0, "nothing was submitted"
        return closeness(page["submitted"], float(task.setup["answer"]), float(task.setup.get("tolerance", 0.2)))
