"""The offline judge without whole-skill blind spots: refusals judged as refusals (an
impossible request or an obstacle on screen grounds them; giving up on a thing in plain view
does not), and instructions' how-to numbers ("n - 1", "2 decimals") are not values the
answer must contain. Views are built as the judge stage builds them (build_view)."""

from __future__ import annotations

from guiforge.judge.evidence import build_view
from guiforge.judge.offline import OfflineJudge, expected_values


def view(instruction: str, actions: list[dict], domain: str = "web", apps: tuple = ("mail",),
         feedback: list[str] | None = None, images: bool = True):
    trajectory = {"trajectory_id": "trj_1", "env_failure": False}
    task = {"task_id": "t1", "domain": domain, "apps": list(apps), "max_steps": 10, "instruction": instruction}
    feedback = feedback or [""] * len(actions)
    steps = [{"step_index": i, "image_sha256": f"f{i}" if images else None, "feedback": feedback[i], "error": None,
              "target_json": None, "thought": "", "action": a} for i, a in enumerate(actions)]
    v = build_view(trajectory, task, steps)
    v.key_frames = [(i, f"f{i}") for i in range(len(actions))] if images else []
    return v


def refusal(instruction: str, screens: list[str], feedback: list[str] | None = None):
    actions = [{"type": "click", "x": 100, "y": 200}, {"type": "terminate", "status": "infeasible"}]
    v = view(instruction, actions, feedback=feedback)
    judge = OfflineJudge()
    needed = judge.frames_needed(v)
    assert needed == ["f0", "f1"]  # a refusal is judged on what the agent saw
    return judge.judge(v, {f"f{i}": text for i, text in enumerate(screens)})


def test_an_impossible_request_refused_is_a_success_though_its_subject_is_on_screen():
    sent = "Sent  Quarterly figures  To: Bo Lind  Mon 12 May"
    verdict = refusal('Recall the email "Quarterly figures" I sent to Bo Lind; it must not reach them.',
                      ["Inbox Sent Drafts", sent])
    assert verdict.success and "infeasible_but_seen" not in verdict.flags, verdict.rationale
    assert "cannot be recalled" in verdict.rationale
    unsend = refusal('Unsend "Quarterly figures" so that Bo Lind never sees it.', ["Inbox", sent])
    assert unsend.success


def test_an_obstacle_on_screen_grounds_a_refusal_and_giving_up_in_plain_view_does_not():
    flights = refusal('Book me a one-way flight from "Bristol" to "Dresden" on 8 July.',
                      ["SkyFinder Bristol Dresden", "Bristol to Dresden  No flights found for this date"])
    assert flights.success, flights.rationale
    gave_up = refusal('Send the draft "Quarterly figures" waiting in my Drafts folder.',
                      ["Drafts", "Drafts  Quarterly figures  To: Bo Lind"])
    assert not gave_up.success and "infeasible_but_seen" in gave_up.flags
    told = refusal("What is the date of birth of Bo Lind?", ["", ""],
                   feedback=['{"contacts": [{"name": "Bo Lind", "phone": "+44 20 7946 0101"}]}',
                             "episode ended"])
    assert told.success


def test_how_to_numbers_are_not_values_to_find():
    assert expected_values("What is the sample standard deviation (n - 1 in the denominator) of the Amount "
                           "column in costs.csv? Round it to two decimals.") == []
    assert expected_values("Give the mean of Hours in log.csv to 2 decimal places.") == []
    assert expected_values("Move 40 to savings, rounded to 2 decimals") == ["40"]


def test_a_correct_computed_answer_is_accepted():
    instruction = ("What is the sample standard deviation (n - 1 in the denominator) of the Amount column in "
                   "costs.csv? Round it to two decimals.")
    code = {"type": "call_tool", "text": '{"name": "coding_tool", "arguments": {"code": "print(round(s, 2))"}}'}
    v = view(instruction, [code, {"type": "answer", "answer": "38.07"}], domain="tools", apps=("tables",),
             feedback=['{"stdout": "38.07\\n", "exit_code": 0}', "episode ended"], images=False)
    verdict = OfflineJudge().judge(v, {})
    assert verdict.success, verdict.rationale
    wrong = view(instruction, [code, {"type": "answer", "answer": "38.70"}], domain="tools", apps=("tables",),
                 feedback=['{"stdout": "38.07\\n", "exit_code": 0}', "episode ended"], images=False)
    assert not OfflineJudge().judge(wrong, {}).success  # a number nothing backs is still caught
