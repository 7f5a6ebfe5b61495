"""Action formats: how often a model family's reply becomes the action it meant.

    python bench/formats.py [--steps 12] [--seed 3]

1. Decoding accuracy over the corpus (tests/formats_corpus: replies in each family's
   published format, 211 cases) per family and screen size, through the family's model
   profile: the share decoded exactly among valid replies (goal 1.0), silent misparses
   (goal 0) and valid replies refused (goal 0). Side by side, the same corpus through the
   settings a user gets without the profile (the format's default coordinates, images sent
   as captured): what a Qwen3-VL or a Claude on a large screen meets.
2. End to end through the official SDKs: per family and screen, ``--steps`` turns sent by
   guiforge's client (the profile's image sizing, tools and request options) to the local
   server playing the family (guiforge.harness.formats.family_models: its own format, its point
   where the provider shows the model the image), each asked for a random canonical action
   of the domain; the share of steps with a parsed action, and with the action meant.

The last line is one JSON object ``{"bench": "formats", "figures": {...}, "ratios": {...}}``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import sys
from pathlib import Path

from PIL import Image

from guiforge.envs.actions import ACTION_SETS, GRID, Action, to_pixels
from guiforge.harness.episode import system_prompt
from guiforge.harness.formats import ParseError, coord_system, get_format
from guiforge.harness.formats.corpus import SCREENS, Family, load_corpus, run_corpus, summary
from guiforge.harness.formats.family_models import WIRE, FamilyModel
from guiforge.harness.policies import ModelPolicy, TurnInput
from guiforge.models import ImagePart, Message, ModelConfig, make_client
from guiforge.models.loop import run
from guiforge.testing.model_server import ModelServer

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "formats_corpus"
PROFILE_OF = {"claude": ("claude-computer-use", "claude-sonnet-4-5"), "qwen3-vl": ("qwen3-vl", "Qwen/Qwen3-VL-8B"),
              "qwen2.5-vl": ("qwen2.5-vl", "Qwen/Qwen2.5-VL-7B"), "ui-tars-1.5": ("ui-tars-1.5", "UI-TARS-1.5-7B"),
              "openai-tools": ("openai-tools", "gpt-4.1"), "openai-cua": ("openai-cua", "computer-use-preview")}
KEYS = ["enter", "tab", "escape", "backspace", "down", "pagedown"]
# what a family's format has no words for: UI-TARS's scroll() and wait() take no amount, CUA's wait no duration
UNSAID = {("ui-tars-1.5", "scroll"): ("amount",), ("ui-tars-1.5", "wait"): ("amount",), ("openai-cua", "wait"): ("amount",)}


def bare(family: Family) -> Family:
    """The family as a user meets it without its profile: same format, the format's own
    coordinates, images sent as captured."""
    cfg = family.config()
    plain = cfg.model_copy(update={"coords": None, "image_resize": None, "max_edge": None, "min_pixels": None,
                                   "max_pixels": None, "resize_factor": None})
    copy = Family(family.name, family.profile, family.screens, family.cases, family.model)
    copy.config = lambda: plain  # type: ignore[method-assign]
    return copy


def decoding() -> dict:
    families = load_corpus(CORPUS)
    with_profile = summary(run_corpus(families))
    without = summary(run_corpus([bare(f) for f in families]))
    return {"cases": sum(len(f.cases) for f in families), "with_profile": with_profile,
            "without_profile": {k: v for k, v in without.items() if "@" not in k}}


def png(width: int, height: int, rng: random.Random) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), tuple(rng.randrange(256) for _ in range(3))).save(out, format="PNG")
    return out.getvalue()


def random_action(domain: str, rng: random.Random) -> Action:
    kinds = sorted(ACTION_SETS["desktop_gui" if domain == "desktop" else domain] - {"answer", "terminate"})
    kind = rng.choice(kinds)

    def p() -> int:
        return rng.randint(0, GRID)

    f: dict = {"type": kind}
    if kind in ("click", "double_click", "right_click", "tap", "long_press"):
        f |= {"x": p(), "y": p()}
    elif kind in ("drag", "swipe"):
        f |= {"x": p(), "y": p(), "x2": p(), "y2": p()}
    elif kind == "scroll":
        f |= {"x": p(), "y": p(), "direction": rng.choice(["up", "down"]), "amount": rng.randint(1, 5)}
    elif kind in ("type", "goto"):
        f["text"] = rng.choice(["Dear Ana", "mail", "invoice 2024", "Zoë's café"])
    elif kind == "key":
        f["keys"] = [rng.choice(KEYS)]
    elif kind == "hotkey":
        f["keys"] = ["ctrl", rng.choice(["s", "c", "a"])]
    elif kind == "open_app":
        f["app"] = rng.choice(["mail", "calendar"])
    elif kind == "wait":
        f["amount"] = rng.randint(1, 3)
    return Action(**f)


def same(meant: Action, got: Action, frame: tuple[int, int], seen, unsaid: tuple[str, ...] = ()) -> bool:
    """The action meant, within rounding of its points, leaving out what the family's
    format has no words for (``unsaid``)."""
    a, b = meant.model_dump(exclude_none=True), got.model_dump(exclude_none=True)
    for key in unsaid:
        a.pop(key, None)
        b.pop(key, None)
    w, h = frame
    step = max((w - 1) / max(seen[0] - 1, 1), (h - 1) / max(seen[1] - 1, 1)) if isinstance(seen, tuple) else w / 1000
    tol = 0.5 * step + 0.5 * max(w, h) / GRID + 0.5
    for xk, yk in (("x", "y"), ("x2", "y2")):
        if xk in a:
            pa, pb = to_pixels(a.pop(xk), a.pop(yk), w, h), to_pixels(b.pop(xk, 0), b.pop(yk, 0), w, h)
            if max(abs(pa[0] - pb[0]), abs(pa[1] - pb[1])) > tol:
                return False
    return a == b


def end_to_end(steps: int, seed: int) -> dict:
    os.environ.setdefault("BENCH_LOCAL_KEY", "sk-local")
    rng = random.Random(seed)
    out: dict = {}
    for family, (profile, model) in PROFILE_OF.items():
        meant: dict[str, Action] = {}
        responder = FamilyModel(family, lambda instruction, step, meant=meant: meant.get(instruction))
        with ModelServer(responder) as server:
            wire = WIRE[family]
            base = server.openai_base_url if wire == "openai" else server.anthropic_base_url
            cfg = ModelConfig(provider=wire, model=model, base_url=base, api_key_env="BENCH_LOCAL_KEY",
                              model_profile=profile, cache=False)
            policy = ModelPolicy(make_client(cfg))
            codec = get_format(cfg.action_format, tool_version=cfg.tool_version)
            for domain in ("web", "mobile"):
                for frame in SCREENS[domain]:
                    coords = coord_system(cfg.coords, frame, min_pixels=cfg.min_pixels, max_pixels=cfg.max_pixels,
                                          factor=cfg.resize_factor, resize=cfg.image_resize, max_edge=cfg.max_edge)
                    system = system_prompt(domain, None, None, codec, coords)
                    tools = codec.render(domain, None, coords).tools if codec.native_tools else None
                    parsed = exact = 0
                    for i in range(steps):
                        instruction = f"bench {family} {domain} {frame} {i}"
                        meant[instruction] = random_action(domain, rng)
                        step = 1 if family == "claude" else 0  # Claude's first look is its own
                        messages = [Message("system", system), Message("user", f"Task: {instruction}"),
                                    Message("user", (f"Step {step}.", ImagePart(png(*frame, rng))))]
                        reply = policy.act(TurnInput(messages, None, step, tools=tools))  # type: ignore[arg-type]
                        try:
                            _, action = codec.parse(reply.model_reply(), domain, None, coords)
                        except ParseError as exc:
                            print(f"{family} {frame}: refused: {exc}", file=sys.stderr)
                            continue
                        parsed += 1
                        seen = responder.perceived[-1][1]
                        exact += same(meant[instruction], action, frame, seen if isinstance(seen, str) else tuple(seen),
                                      UNSAID.get((family, meant[instruction].type), ()))
                    out[f"{family}@{frame[0]}x{frame[1]}"] = {"steps": steps, "parsed_share": parsed / steps,
                                                              "meant_share": exact / steps}
            run(policy.client.aclose())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=12, help="turns per family and screen, end to end")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    corpus = decoding()
    e2e = end_to_end(args.steps, args.seed)
    families = {k: v for k, v in corpus["with_profile"].items() if "@" not in k}
    total = {k: sum(v[k] for v in families.values()) for k in ("exact", "refused_valid", "silent_misparse", "refused")}
    bare_total = {k: sum(v[k] for v in corpus["without_profile"].values())
                  for k in ("exact", "refused_valid", "silent_misparse")}
    valid = total["exact"] + total["refused_valid"] + total["silent_misparse"]
    bare_valid = sum(bare_total.values())
    figures = {
        "corpus_cases": corpus["cases"], "decodings": sum(total.values()),
        "exact_share_valid": round(total["exact"] / valid, 4), "silent_misparses": total["silent_misparse"],
        "refused_valid": total["refused_valid"], "per_family_and_screen": corpus["with_profile"],
        "without_profile": corpus["without_profile"],
        "end_to_end": e2e,
        "end_to_end_parsed_share": round(sum(v["parsed_share"] for v in e2e.values()) / len(e2e), 4),
        "end_to_end_meant_share": round(sum(v["meant_share"] for v in e2e.values()) / len(e2e), 4),
    }
    ratios = {
        "exact_share_with_vs_without_profile": round((total["exact"] / valid) / max(bare_total["exact"] / bare_valid, 1e-9), 3),
        "silent_misparses_without_per_with_profile": (bare_total["silent_misparse"] / total["silent_misparse"]
                                                      if total["silent_misparse"] else None),
    }
    figures["silent_misparses_without_profile"] = bare_total["silent_misparse"]
    print(json.dumps({"bench": "formats", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
