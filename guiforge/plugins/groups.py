"""The entry-point groups guiforge reads, one per registry, and what each one holds.

An outside package (and guiforge itself, in its own pyproject.toml) registers under these
names; ``guiforge plugins`` lists them by group.
"""

from __future__ import annotations

GROUPS: dict[str, str] = {
    "guiforge.stages": "stage kinds: Stage subclasses (what `uses:` names)",
    "guiforge.envs": "environment kinds: Environment subclasses, by the domain they serve",
    "guiforge.checks": "verifier checks: a check function, or a mapping of names to check functions",
    "guiforge.providers": "model providers: ModelClient subclasses (what `provider:` names)",
    "guiforge.action_formats": "action formats: ActionFormat subclasses (what `action_format:` names)",
    "guiforge.exports": "export formats: ExportFormat subclasses (what an export's `formats:` names)",
    "guiforge.acceptance": "SFT acceptance policies: AcceptancePolicy objects (what `accept:` names)",
    "guiforge.tables": "lake tables: TableSpec objects (a table's name and Arrow schema)",
}
