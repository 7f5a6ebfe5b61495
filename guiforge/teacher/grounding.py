"""The error a reference step raises when what it names is not on screen."""

from __future__ import annotations


class GroundingError(LookupError):
    """A reference step names something that is not on screen (a broken card or app)."""
