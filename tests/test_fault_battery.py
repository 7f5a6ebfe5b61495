"""The fault battery's CI variant (guiforge.batteries.faults, bench/fault_battery.py --short):
a small smoke pipeline with injected faults of every kind, its model roles behind local
endpoints through the official SDKs, run by `guiforge run`. It must exit 0, leave exactly one
row of its kind per injected fault (a package gate's only when its retry met one too), no row
of a failure kind without its injection, and no fault as a reward anywhere downstream."""

from __future__ import annotations

from guiforge.batteries.faults import run_battery


def test_injected_faults_are_rows_of_their_kind_and_never_rewards(tmp_path):
    result = run_battery(tmp_path, short=True)
    assert result.exit_code == 0, result.output
    assert not result.problems, "\n".join(result.problems)
    assert result.rows == result.expected and result.rows
    kinds = {kind for by_kind in result.rows.values() for kind in by_kind}
    assert kinds == {"env_failure", "model_failure", "verifier_failure"}, result.summary()
    assert set(result.rows) == {"task_gates", "rollouts", "judge"}, result.summary()
    assert result.sound["trajectories"] > 0  # the faults left sound work for the consumers to check
