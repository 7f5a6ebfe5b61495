"""A model judge: the judge view rendered by a jinja prompt per domain, key screenshots sent as
images, a JSON verdict validated with correction turns (models/structured.py), through the
shared clients (call cache, retries, token and cost accounting)."""

from __future__ import annotations

from functools import cache
from importlib import resources

from jinja2 import BaseLoader, Environment, TemplateNotFound

from guiforge.failures import MODEL_FAILURE, PARSE_FAILURE
from guiforge.judge.evidence import JudgeView
from guiforge.judge.verdict import JudgeReply, Verdict
from guiforge.models.base import ImagePart, Message, ModelClient, prompt_hash
from guiforge.models.structured import agenerate

DOMAIN_NAMES = {"web": "web browser", "mobile": "mobile phone", "desktop": "desktop office", "tools": "tool use"}


class _PackageLoader(BaseLoader):
    def get_source(self, environment, template):
        path = resources.files("guiforge.judge").joinpath("prompts", template)
        if not path.is_file():
            raise TemplateNotFound(template)
        return path.read_text(), None, lambda: True


@cache
def _env() -> Environment:
    return Environment(loader=_PackageLoader(), trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False)


def system_prompt(domain: str) -> str:
    name = domain if domain in DOMAIN_NAMES else "web"
    return _env().get_template(f"{name}.j2").render(domain_name=DOMAIN_NAMES[name]).strip()


def judge_messages(view: JudgeView, images: dict[str, bytes], media_types: dict[str, str]) -> list[Message]:
    """System prompt for the domain, then one user turn: instruction, action history and the
    key screenshots, each captioned with its step."""
    parts: list[str | ImagePart] = [
        f"Instruction given to the agent:\n{view.instruction}\n\n"
        f"Action history ({len(view.steps)} steps"
        + (f", budget {view.max_steps}" if view.max_steps else "") + f"):\n{view.history()}\n"
    ]
    last = view.key_frames[-1][0] if view.key_frames else None
    for index, sha in view.key_frames:
        caption = "final screen" if index == last else "screen"
        parts.append(f"Screenshot before step {index} ({caption}):")
        parts.append(ImagePart(images[sha], media_types.get(sha, "image/png")))
    parts.append("Judge the trajectory. Reply with the JSON object only.")
    return [Message("system", system_prompt(view.domain)), Message("user", tuple(parts))]


def _check_steps(view: JudgeView):
    known = {s.index for s in view.steps}

    def check(reply: JudgeReply) -> list[str]:
        bad = [i for i in reply.evidence_steps if i not in known]
        return [f"evidence_steps {bad} are not steps of this trajectory (steps are "
                f"{min(known, default=0)}-{max(known, default=0)})"] if bad else []
    return check


async def ajudge(client: ModelClient, view: JudgeView, images: dict[str, bytes],
                 media_types: dict[str, str] | None = None) -> Verdict:
    messages = judge_messages(view, images, media_types or {})
    result = await agenerate(client, messages, JudgeReply, extra_check=_check_steps(view))
    tokens_in = sum(c.input_tokens for c in result.completions)
    tokens_out = sum(c.output_tokens for c in result.completions)
    cost = sum(c.cost_usd for c in result.completions)
    model = f"{client.config.provider}:{client.config.model}"
    frames = [sha for _, sha in view.key_frames]
    if result.failure is not None:  # the endpoint failed for good: no verdict, not the trajectory's fault
        return Verdict(None, None, f"model failure: {result.failure}"[:2000], model, prompt_hash(messages),
                       evidence_images=frames, failure_kind=MODEL_FAILURE, flags=[MODEL_FAILURE],
                       input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost)
    if result.value is None:
        return Verdict(None, None, f"parse failure after {result.attempts} attempts: {result.errors[-1]}"[:2000],
                       model, prompt_hash(messages), evidence_images=frames, parse_failure=True,
                       failure_kind=PARSE_FAILURE, flags=["parse_failure"], input_tokens=tokens_in,
                       output_tokens=tokens_out, cost_usd=cost)
    reply = result.value
    return Verdict(reply.success, reply.score, reply.rationale, model, prompt_hash(messages),
                   evidence_steps=reply.evidence_steps or [i for i, _ in view.key_frames], evidence_images=frames,
                   input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost)
