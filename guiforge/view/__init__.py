"""``guiforge view``: a local, read-only web app over the lake for the researcher: runs and
their provenance, a run's funnel, stage timeline, time and cost, row tables with filters,
the trajectory player, and two runs side by side (server.py lists the routes)."""

from guiforge.view.server import DEFAULT_PORT, make_server, serve_in_thread

__all__ = ["DEFAULT_PORT", "make_server", "serve_in_thread"]
