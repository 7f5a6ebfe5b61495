"""The image budget: how many tokens a row's screenshots cost a trainer's processor, and
rows fitted to a trainer's ``max_length`` so that truncation never cuts an image's tokens.

TRL's SFTTrainer truncates every sequence to ``max_length`` (1024 in trl 1.16's SFTConfig);
a truncation inside an image's placeholder tokens fails the step with "Image features and
image tokens do not match". An export with ``max_length`` set therefore fits each row: the
oldest "Earlier steps" lines are left out first, then the screenshots are scaled down (same
aspect) until the row's text, estimated with :func:`text_tokens`, plus its image tokens
under the reference processor (Qwen2.5-VL's published rule) fit; a row that cannot keep
``min_image_tokens`` per screenshot is left out with the reason.

Token counts per processor, from their published patch rules (the card prints them for the
export's own frame sizes):

- Qwen2-VL / Qwen2.5-VL: the frame is resized to multiples of 28 px (14 px patches merged
  2x2) inside [min_pixels, max_pixels]; one token per 28x28 block. The models' hub
  processors use min 3,136 and max 12,845,056 pixels (native size for any screen here);
  ``Qwen2VLImageProcessor()`` built bare uses max 1,003,520 (1,280 tokens).
- Qwen3-VL: the same rule with 32 px blocks (16 px patches merged 2x2), min 65,536 and max
  16,777,216 pixels in its hub processor.
- Gemma 3: 256 tokens per image (896x896, pan-and-scan off by default).
- LLaVA-1.5: 576 tokens per image (336x336, 14 px patches).
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Any

from guiforge.models.images import (
    smart_resize,  # Qwen-VL's resize, one copy for prompts and budgets
)

# Qwen's tokenizers (and the test's own small BPE) give every digit a token of its own; the
# rest at 2.8 bytes a token is below what BPE tokenizers reach on English and JSON (about
# 3.5-4.5 with a large vocabulary, about 3 with the tests' 4,000-token one): an overestimate
CHARS_PER_TOKEN = 2.8
MESSAGE_OVERHEAD = 6  # role markers and separators a chat template adds per message


@dataclass(frozen=True)
class Processor:
    """One processor's image-token rule."""

    name: str
    factor: int = 0  # dynamic resolution: pixels per token side (0: a fixed count)
    min_pixels: int = 0
    max_pixels: int = 0
    fixed: int = 0

    def tokens(self, width: int, height: int) -> int:
        if not self.factor:
            return self.fixed
        h, w = smart_resize(height, width, self.factor, self.min_pixels, self.max_pixels)
        return (h // self.factor) * (w // self.factor)


PROCESSORS = (
    Processor("Qwen2.5-VL (hub defaults)", 28, 3136, 12845056),
    Processor("Qwen2-VL image processor, bare defaults", 28, 3136, 1003520),
    Processor("Qwen3-VL (hub defaults)", 32, 65536, 16777216),
    Processor("Gemma 3", fixed=256),
    Processor("LLaVA-1.5", fixed=576),
)
REFERENCE = PROCESSORS[0]  # the one rows are fitted with: the largest count of the dynamic ones here


def text_tokens(messages: list[dict[str, Any]]) -> int:
    """An overestimate of a row's text tokens under a BPE tokenizer."""
    text = "".join(p.get("text") or "" for m in messages for p in m["content"] if p["type"] == "text")
    digits = sum(c.isdigit() for c in text)
    return digits + math.ceil((len(text.encode()) - digits) / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD * len(messages)


def scaled_to(width: int, height: int, tokens: int, processor: Processor = REFERENCE) -> tuple[int, int]:
    """The largest (width, height) with ``width/height`` kept whose tokens stay within ``tokens``."""
    if processor.tokens(width, height) <= tokens:
        return width, height
    scale = math.sqrt(tokens * processor.factor ** 2 / (width * height))
    while scale > 0.01:
        w, h = max(1, int(width * scale)), max(1, int(height * scale))
        if processor.tokens(w, h) <= tokens:
            return w, h
        scale *= 0.97
    return max(1, int(width * 0.01)), max(1, int(height * 0.01))


def resize_png(data: bytes, width: int, height: int) -> bytes:
    """A frame scaled to (width, height), as PNG."""
    # heavy: PIL, imported when a frame is resized
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        out = io.BytesIO()
        # compress_level 1: about half the time of the default 6 for ~2% more bytes (measured on
        # the run's screenshots); Parquet compresses the column again
        im.convert("RGB").resize((width, height), Image.Resampling.LANCZOS).save(out, format="PNG", compress_level=1)
        return out.getvalue()


@dataclass(frozen=True)
class Budget:
    """A row's fit: ``max_length`` tokens in all, at least ``min_image_tokens`` per screenshot."""

    max_length: int = 1024
    min_image_tokens: int = 256

    def image_tokens(self, messages: list[dict[str, Any]], n_images: int) -> int | None:
        """Tokens each screenshot may take (None: the row cannot fit)."""
        left = self.max_length - text_tokens(messages)
        if n_images == 0:
            return 0 if left >= 0 else None
        per = left // n_images
        return per if per >= self.min_image_tokens else None


def trim_earlier_steps(messages: list[dict[str, Any]], budget: Budget, n_images: int) -> list[dict[str, Any]]:
    """``messages`` with the oldest 'Earlier steps' lines left out until the text leaves room
    for ``n_images`` screenshots at the minimum (or no lines are left)."""
    index = next((i for i, m in enumerate(messages) if m["role"] == "user" and m["content"]
                  and (m["content"][0].get("text") or "").startswith("Earlier steps")), None)
    if index is None:
        return messages
    lines = messages[index]["content"][0]["text"].split("\n")[1:]
    dropped = 0
    out = messages
    while lines and budget.image_tokens(out, n_images) is None:
        lines.pop(0)
        dropped += 1
        head = f"Earlier steps ({dropped} before these left out):" if dropped else "Earlier steps:"
        text = "\n".join([head, *lines]) if lines else f"Earlier steps: {dropped} left out."
        content = [{"type": "text", "text": text}, *messages[index]["content"][1:]]
        out = [*messages[:index], {"role": "user", "content": content}, *messages[index + 1:]]
    return out


PIXEL_CONVENTIONS = ("pixels", "resized")  # points in a frame's own pixels: its size may not change


def fit_rows(rows: list, images: dict[str, dict[str, Any]], budget: Budget, resize: bool, exclude) -> list:
    """``rows`` (ExportRow) fitted to ``budget``: earlier-step lines trimmed, screenshots
    scaled down where ``resize`` (new frames are added to ``images`` under
    ``<sha>_<w>x<h>``); ``exclude(row, reason)`` for a row that cannot fit."""
    kept = []
    for row in rows:
        n = len(row.images)
        messages = trim_earlier_steps(row.messages, budget, n)
        per = budget.image_tokens(messages, n)
        native = [REFERENCE.tokens(images[k]["width"], images[k]["height"]) for k in row.images]
        if per is None or (not resize and any(t > per for t in native)):
            need = text_tokens(messages) + sum(native if not resize else [budget.min_image_tokens] * n)
            exclude(row, f"does not fit max_length {budget.max_length}: about {need} tokens with the earlier steps "
                         f"left out{'' if not resize or not n else f' and each screenshot at {budget.min_image_tokens} tokens'}")
            continue
        keys = []
        for key, tokens in zip(row.images, native, strict=True):
            if tokens > per:
                frame = images[key]
                w, h = scaled_to(frame["width"], frame["height"], per)
                small = f"{key}_{w}x{h}"
                if small not in images:
                    images[small] = {"sha256": key, "data": resize_png(frame["data"], w, h), "width": w,
                                     "height": h, "format": "png"}
                key = small
            keys.append(key)
        row.messages, row.images = messages, keys
        if keys:
            row.columns["image_width"], row.columns["image_height"] = images[keys[-1]]["width"], images[keys[-1]]["height"]
        row.columns["est_tokens"] = text_tokens(messages) + sum(REFERENCE.tokens(images[k]["width"], images[k]["height"])
                                                                for k in keys)
        kept.append(row)
    return kept
