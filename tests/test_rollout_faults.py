"""An environment that will not start is a sample recorded as env_failure, not an aborted
rollouts stage (before: `EnvFailure: start mobile crashed` killed the stage and the shards in
flight); the manager tries a second instance first."""

from __future__ import annotations

from guiforge.envs import EnvManager, EnvSpec
from guiforge.envs.tools import ToolsEnv
from guiforge.stages.rollouts import acquire


class NeverStarts(ToolsEnv):
    """The tools adapter with a start that fails every time (a missing display, a full disk)."""

    def start(self) -> None:
        raise OSError("No space left on device: '/tmp/guiforge-tools-x'")


def test_an_instance_that_never_starts_is_an_env_failure_sample():
    with EnvManager({"tools": NeverStarts}, max_instances=1) as manager:
        lease, episode = acquire(manager, EnvSpec(domain="tools"), "tsk_1")
        assert lease is None
        assert episode.failure_kind == "env_failure" and episode.env_failure and episode.verdict is None
        assert episode.error.startswith("environment failure: no tools instance: start tools crashed: OSError")
        assert manager.stats.failures == 2 and manager.stats.replaced == 1  # a second instance was tried


def test_a_sound_instance_is_leased():
    with EnvManager({"tools": ToolsEnv}, max_instances=1) as manager:
        lease, episode = acquire(manager, EnvSpec(domain="tools"), "tsk_1")
        assert episode is None and lease is not None
        lease.release()
