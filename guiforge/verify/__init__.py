"""Verifiers: rubric checks over the final environment state, run out of process."""

from guiforge.verify import office_checks  # noqa: F401 - registers the office checks into CHECKS
from guiforge.verify.checks import CHECKS, check
from guiforge.verify.runner import VerifierPool, score_rubric

__all__ = ["CHECKS", "VerifierPool", "check", "score_rubric"]
