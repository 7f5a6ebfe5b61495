"""Stage kinds by name: what ``stages.<name>.uses`` (or the stage's name) refers to."""

from __future__ import annotations

from guiforge.stages.base import Stage
from guiforge.stages.diagnose import DiagnoseStage
from guiforge.stages.export import ExportStage
from guiforge.stages.judge import JudgeStage
from guiforge.stages.personas import PersonasStage
from guiforge.stages.relabel import RelabelStage
from guiforge.stages.resynthesize import ResynthesizeStage
from guiforge.stages.rl_select import RlSelectStage
from guiforge.stages.rollouts import RolloutsStage
from guiforge.stages.skill_author import SkillAuthorStage
from guiforge.stages.skills import SkillsStage
from guiforge.stages.task_gates import TaskGatesStage
from guiforge.stages.tasks import TaskCandidatesStage
from guiforge.stages.worlds import WorldsStage

STAGES: dict[str, type[Stage]] = {
    cls.kind: cls for cls in (PersonasStage, WorldsStage, SkillsStage, TaskCandidatesStage, TaskGatesStage,
                               RolloutsStage, SkillAuthorStage, JudgeStage, RlSelectStage, RelabelStage,
                               DiagnoseStage, ResynthesizeStage, ExportStage)
}
