"""guiforge for RL trainers: a GRPO reward function that replays a completion in the task's
real environment and returns the verifier's score (:class:`TaskReward`), and an environment
TRL's multi-turn GRPO drives through its ``environment_factory`` (:class:`GuiforgeEnv`)."""

from guiforge.rl.env import GuiforgeEnv
from guiforge.rl.reward import TaskReward, replay

__all__ = ["GuiforgeEnv", "TaskReward", "replay"]
