"""Prompt-prefix reuse per context policy: what a server's prefix cache (vLLM automatic
prefix caching, SGLang's radix cache) can reuse from one step's prompt to the next.

    python bench/prefix_reuse.py [--steps 30] [--episodes 5] [--image-tokens 1105] [--seed 11]

Episodes are synthetic but built from the harness's own pieces: the real web system prompt,
replies in the harness's reply format (thought + canonical action JSON), the harness's step
summaries and feedback, a distinct screenshot per step. Each prompt comes from
``guiforge.harness.context.build_messages`` for the policies full, last_k (k=3), summary and
window (K=10, O=2).

Tokens are approximated: characters / 4 for text, ``--image-tokens`` per screenshot (1105:
OpenAI's count for a 1280x720 frame at high detail; Qwen2.5-VL's is ~1200). For each step:
the prompt's size, and the share of it equal to the previous step's prompt from the start,
counted two ways: whole leading messages (``shared_prefix``, what the harness records per
step) and tokens (inside the first differing message too, as a radix/paged cache matches).
``with_reply`` also counts the previous step's reply, which a server that caches its
generated tokens holds as well. ``uncached`` is what must still be prefilled: the sum over
steps of prompt tokens minus reused tokens.

The last line is one JSON object ``{"bench": "prefix_reuse", "figures": {...}, "ratios": {...}}``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
from typing import Any

from guiforge.envs.actions import Action
from guiforge.harness.context import ContextPolicy, Observed, Turn, build_messages, shared_prefix
from guiforge.harness.episode import _summary, system_prompt
from guiforge.harness.parser import format_reply
from guiforge.models.base import ImagePart, Message

POLICIES = {
    "full": ContextPolicy(kind="full"),
    "last_k": ContextPolicy(kind="last_k", k=3),
    "summary": ContextPolicy(kind="summary"),
    "window": ContextPolicy(kind="window", window=10, overlap=2),
}
LABELS = ["Reply", "Send", "Inbox", "Search mail", "Invoice March", "Close viewer", "Archive", "Compose",
          "Subject", "To", "Attachment invoice.pdf", "Calendar", "New event", "Save"]
THOUGHTS = ["I need to open the email about the invoice first.", "The attachment viewer shows the total; I'll close it.",
            "Now I reply to the sender with the amount.", "The compose box is open, so I type the message.",
            "Everything is filled in; sending the reply.", "That click missed; I'll try the button again."]


def tokens_of(message: Message, image_tokens: int) -> float:
    return sum(len(p) / 4 if isinstance(p, str) else image_tokens for p in message.parts())


def prompt_tokens(messages: list[Message], image_tokens: int) -> float:
    return sum(tokens_of(m, image_tokens) for m in messages)


def _common(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def reused_tokens(previous: list[Message], current: list[Message], image_tokens: int) -> float:
    """Tokens at the start of ``current`` equal to the start of ``previous``."""
    total = 0.0
    for a, b in zip(previous, current, strict=False):
        if a.role != b.role:
            return total
        pa, pb = a.parts(), b.parts()
        for x, y in zip(pa, pb, strict=False):
            if isinstance(x, str) and isinstance(y, str):
                common = _common(x, y)
                total += common / 4
                if common < len(x) or common < len(y):
                    return total
            elif isinstance(x, ImagePart) and isinstance(y, ImagePart) and x.data == y.data:
                total += image_tokens
            else:
                return total
        if len(pa) != len(pb):
            return total
    return total


def synthetic_episode(steps: int, rng: random.Random) -> tuple[str, list[Turn], list[Observed]]:
    """The instruction, the turns the policy took and the observation before each turn."""
    instruction = ("Reply to Dana Whitfield's email \"Invoice March\" and tell them the total of the "
                   "attached invoice.")
    turns: list[Turn] = []
    observations: list[Observed] = []
    feedback = ""
    for i in range(steps):
        shot = hashlib.sha256(f"{rng.random()}|{i}".encode()).digest() * 8  # distinct per step
        observations.append(Observed(shot, "image/png", None, feedback))
        kind = rng.choices(["click", "type", "scroll"], weights=[7, 2, 1])[0]
        if kind == "type":
            action = Action(type="type", text=f"Hi Dana, the invoice total is {rng.randint(100, 9999)}.{rng.randint(10, 99)} EUR.")
            result = f"typed {len(action.text or '')} characters into “Message body”"
        elif kind == "scroll":
            action = Action(type="scroll", x=rng.randint(0, 999), y=rng.randint(0, 999), direction="down", amount=3)
            result = "scrolled down by 3"
        else:
            action = Action(type="click", x=rng.randint(0, 999), y=rng.randint(0, 999))
            result = f"clicked “{rng.choice(LABELS)}”"
        error = f"click at ({rng.randint(0, 1279)}, {rng.randint(0, 719)}) hit nothing clickable" if rng.random() < 0.1 else None
        reply = format_reply(rng.choice(THOUGHTS), action)
        feedback = error or result
        turns.append(Turn(shot, "image/png", None, reply, _summary(action, result, error), feedback))
    return instruction, turns, observations


def measure(policy: ContextPolicy, episodes: list[tuple[str, list[Turn], list[Observed]]], system: str,
            image_tokens: int) -> dict[str, Any]:
    sizes_by_step: dict[int, list[float]] = {}
    prompt_sum = reused_sum = reused_reply_sum = reused_msg_sum = 0.0
    step_fractions: list[float] = []
    for instruction, turns, observations in episodes:
        previous: list[Message] = []
        for step, observed in enumerate(observations):
            messages = build_messages(policy, system, instruction, turns[:step], observed)
            size = prompt_tokens(messages, image_tokens)
            sizes_by_step.setdefault(step, []).append(size)
            prompt_sum += size
            if previous:
                reused = reused_tokens(previous, messages, image_tokens)
                with_reply = [*previous, Message("assistant", turns[step - 1].reply)]
                reused_reply_sum += reused_tokens(with_reply, messages, image_tokens)
                reused_msg_sum += prompt_tokens(messages[:shared_prefix(previous, messages)], image_tokens)
                reused_sum += reused
                step_fractions.append(reused / size)
            previous = messages
    last = max(sizes_by_step)
    mean_size = statistics.mean(s for sizes in sizes_by_step.values() for s in sizes)
    return {
        "reuse_fraction": round(reused_sum / prompt_sum, 3),
        "reuse_fraction_messages": round(reused_msg_sum / prompt_sum, 3),
        "reuse_fraction_with_reply": round(reused_reply_sum / prompt_sum, 3),
        "reuse_fraction_median_step": round(statistics.median(step_fractions), 3),
        "prompt_tokens_mean": round(mean_size),
        "prompt_tokens_max": round(max(max(v) for v in sizes_by_step.values())),
        "prompt_tokens_last_step": round(statistics.mean(sizes_by_step[last])),
        "prompt_tokens_by_step": [round(statistics.mean(sizes_by_step[s])) for s in sorted(sizes_by_step)],
        "prefill_tokens_per_episode": round(prompt_sum / len(episodes)),
        "uncached_tokens_per_episode": round((prompt_sum - reused_sum) / len(episodes)),
        "uncached_tokens_per_episode_with_reply": round((prompt_sum - reused_reply_sum) / len(episodes)),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--episodes", type=int, default=5)
    ap.add_argument("--image-tokens", type=int, default=1105)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    episodes = [synthetic_episode(args.steps, rng) for _ in range(args.episodes)]
    system = system_prompt("web")
    figures: dict[str, Any] = {"steps": args.steps, "episodes": args.episodes, "image_tokens": args.image_tokens,
                               "system_prompt_tokens": round(len(system) / 4)}
    results = {name: measure(policy, episodes, system, args.image_tokens) for name, policy in POLICIES.items()}
    for name, result in results.items():
        figures |= {f"{name}_{key}": value for key, value in result.items()}

    def ratio(a: str, b: str) -> float:
        return round(figures[a] / figures[b], 3) if figures[b] else float("nan")

    ratios = {
        "window_vs_last_k_reuse": ratio("window_reuse_fraction", "last_k_reuse_fraction"),
        "window_vs_summary_reuse": ratio("window_reuse_fraction", "summary_reuse_fraction"),
        "window_vs_full_reuse": ratio("window_reuse_fraction", "full_reuse_fraction"),
        "window_vs_last_k_uncached_tokens": ratio("window_uncached_tokens_per_episode", "last_k_uncached_tokens_per_episode"),
        "window_vs_full_uncached_tokens": ratio("window_uncached_tokens_per_episode", "full_uncached_tokens_per_episode"),
        "window_vs_full_prompt_tokens_last_step": ratio("window_prompt_tokens_last_step", "full_prompt_tokens_last_step"),
        "window_vs_last_k_prompt_tokens_mean": ratio("window_prompt_tokens_mean", "last_k_prompt_tokens_mean"),
        "summary_vs_last_k_uncached_tokens": ratio("summary_uncached_tokens_per_episode", "last_k_uncached_tokens_per_episode"),
    }
    print(json.dumps({"bench": "prefix_reuse", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
