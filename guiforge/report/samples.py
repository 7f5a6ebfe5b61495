"""Sample trajectories for the report: a few accepted and a few rejected ones, spread over
domains, each with its instruction and a strip of its screenshots (read from the images
table by hash, shrunk to thumbnails and inlined as data URIs so the page stays offline)."""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field

import duckdb
from PIL import Image

from guiforge.report.views import rows

THUMB_BOX = (264, 400)  # three to a row beside the instruction


@dataclass
class Frame:
    step_index: int
    action: str
    data_uri: str
    width: int
    height: int


@dataclass
class Sample:
    run_id: str
    trajectory_id: str
    task_id: str
    domain: str
    skill_id: str
    instruction: str
    accepted: bool
    verdict: str  # why it counts as accepted or rejected
    n_steps: int
    score: float | None
    frames: list[Frame] = field(default_factory=list)
    url: str = ""  # the trajectory in guiforge view's player


def _verdict_sql(filled: set[str]) -> str:
    """Accepted as the judge stage decided when it ran, else by the verifier's outcome."""
    if "judgments" in filled:
        return """
            SELECT run_id, trajectory_id, bool_or(accepted) AS accepted,
                   string_agg(DISTINCT coalesce(accept_reason, judge || ': ' || coalesce(rationale, '')), '; ')
                       AS verdict
            FROM judgments GROUP BY 1, 2"""
    return """
        SELECT run_id, trajectory_id, success AS accepted,
               'verifier: ' || CASE WHEN success THEN 'success' ELSE 'failure' END
                   || ' (score ' || round(score, 2) || '); no judge stage yet' AS verdict
        FROM trajectories WHERE success IS NOT NULL"""


def pick_samples(con: duckdb.DuckDBPyConnection, filled: set[str], per_side: int = 3,
                 frames_per_sample: int = 3) -> list[Sample]:
    """Up to ``per_side`` accepted and ``per_side`` rejected trajectories, one domain after
    another (a stable hash orders them, so the same lake gives the same page)."""
    if "trajectories" not in filled:
        return []
    picked = rows(con, f"""
        WITH verdicts AS ({_verdict_sql(filled)}),
        ranked AS (
            SELECT r.run_id, r.trajectory_id, r.task_id, t.domain, t.skill_id, t.instruction, v.accepted,
                   v.verdict, r.n_steps, r.score,
                   row_number() OVER (PARTITION BY v.accepted, t.domain ORDER BY hash(r.trajectory_id)) AS k,
                   (r.run_id, r.trajectory_id) IN (SELECT (run_id, trajectory_id) FROM steps
                                                   WHERE image_sha256 IS NOT NULL) AS shown
            FROM trajectories r JOIN tasks t USING (run_id, task_id) JOIN verdicts v USING (run_id, trajectory_id)
            WHERE v.accepted IS NOT NULL AND r.n_steps > 0)
        SELECT * FROM ranked
        -- trajectories with screenshots first (tool-only ones have none), one domain after another
        QUALIFY row_number() OVER (PARTITION BY accepted ORDER BY shown DESC, k, domain) <= {int(per_side)}
        ORDER BY accepted DESC, domain""")
    samples = [Sample(**{k: v for k, v in r.items() if k not in ("k", "shown")}) for r in picked]
    for s in samples:
        s.frames = _frames(con, s.run_id, s.trajectory_id, frames_per_sample)
    return samples


def _frames(con: duckdb.DuckDBPyConnection, run_id: str, trajectory_id: str, count: int) -> list[Frame]:
    steps = rows(con, """
        SELECT s.step_index, s.image_sha256, s.action.type AS action_type, s.action.text AS text
        FROM steps s WHERE s.run_id = ? AND s.trajectory_id = ? AND s.image_sha256 IS NOT NULL
        ORDER BY s.step_index""", [run_id, trajectory_id])
    if not steps:
        return []
    # First, middle and last screenshots (or every one of a short trajectory).
    chosen = sorted({round(i * (len(steps) - 1) / max(count - 1, 1)) for i in range(count)})
    wanted = [steps[i] for i in chosen]
    images = {r["sha256"]: r["data"] for r in rows(
        con, "SELECT sha256, any_value(data) AS data FROM images WHERE sha256 IN "
             f"({', '.join('?' for _ in wanted)}) GROUP BY 1", [s["image_sha256"] for s in wanted])}
    frames = []
    for s in wanted:
        data = images.get(s["image_sha256"])
        if data is None:
            continue  # a step whose frame is missing from the images table shows no picture
        action = s["action_type"] or "?"
        if s["text"]:
            action += f" {s['text'][:40]!r}"
        frames.append(_thumbnail(s["step_index"], action, data))
    return frames


def _thumbnail(step_index: int, action: str, data: bytes) -> Frame:
    with Image.open(io.BytesIO(data)) as img:
        img = img.convert("RGB")
        img.thumbnail(THUMB_BOX, Image.Resampling.LANCZOS)  # a phone frame is tall: both sides bound
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=82)
        width, height = img.size
    uri = "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
    return Frame(step_index, action, uri, width, height)
