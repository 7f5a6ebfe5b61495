"""Image sizing: the size a provider documents it shrinks a screenshot to before the model
sees it, and that resize done here, before sending, so the model and the codec that reads
its coordinates agree on one frame.

- ``fit`` (Anthropic): the long edge at most ``max_edge`` and the area at most ``max_pixels``
  (1568 px and about 1.15 megapixels for Claude up to Sonnet 4.6; Opus 4.7: 2576 px, 3.75 MP),
  the aspect ratio kept. Sent larger, the API shrinks it and Claude answers in the smaller
  image's pixels.
- ``smart`` (Qwen2.5-VL, UI-TARS): Qwen's processor's smart resize: both sides multiples of
  ``factor``, the area within ``[min_pixels, max_pixels]``. Sent at that size, the server's
  processor leaves it as it is.
- ``none``: sent as captured.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from functools import lru_cache

# Qwen2.5-VL's image processor defaults (preprocessor_config.json).
QWEN_FACTOR = 28
QWEN_MIN_PIXELS = 56 * 56
QWEN_MAX_PIXELS = 14 * 14 * 4 * 16384
RESIZE_MODES = ("none", "fit", "smart")


def smart_resize(height: int, width: int, factor: int = QWEN_FACTOR, min_pixels: int = QWEN_MIN_PIXELS,
                 max_pixels: int = QWEN_MAX_PIXELS) -> tuple[int, int]:
    """The (height, width) Qwen2.5-VL's processor resizes an image to: both sides multiples
    of ``factor``, the area within [min_pixels, max_pixels], the aspect ratio kept."""
    if min(height, width) <= 0:
        raise ValueError(f"an image of {width}x{height} has no pixels")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def fit_size(width: int, height: int, max_edge: int | None, max_pixels: int | None) -> tuple[int, int]:
    """(width, height) shrunk, aspect kept, until the long edge is at most ``max_edge`` and
    the area at most ``max_pixels``; never enlarged."""
    if min(width, height) <= 0:
        raise ValueError(f"an image of {width}x{height} has no pixels")
    scale = 1.0
    if max_edge:
        scale = min(scale, max_edge / max(width, height))
    if max_pixels:
        scale = min(scale, math.sqrt(max_pixels / (width * height)))
    if scale >= 1.0:
        return width, height
    return max(1, math.floor(width * scale)), max(1, math.floor(height * scale))


@dataclass(frozen=True)
class ImageSizing:
    """How a model's images are sized before they are sent (see the module docstring)."""

    mode: str = "none"
    max_edge: int | None = None
    max_pixels: int | None = None
    min_pixels: int | None = None
    factor: int | None = None

    def __post_init__(self) -> None:
        if self.mode not in RESIZE_MODES:
            raise ValueError(f"unknown image resize {self.mode!r}; use one of {', '.join(RESIZE_MODES)}")

    def size(self, width: int, height: int) -> tuple[int, int]:
        """The (width, height) an image of this size is sent at."""
        if self.mode == "fit":
            return fit_size(width, height, self.max_edge, self.max_pixels)
        if self.mode == "smart":
            h, w = smart_resize(height, width, self.factor or QWEN_FACTOR, self.min_pixels or QWEN_MIN_PIXELS,
                                self.max_pixels or QWEN_MAX_PIXELS)
            return w, h
        return width, height


AS_CAPTURED = ImageSizing()


def image_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a PNG or JPEG, read from its header."""
    from PIL import Image  # Pillow: a heavy import only paths that size images need

    with Image.open(io.BytesIO(data)) as img:
        return img.size


@lru_cache(maxsize=256)  # a screenshot stays in the prompt for several steps: resize it once
def resized(data: bytes, media_type: str, width: int, height: int) -> bytes:
    """The image at exactly ``width`` x ``height`` (Lanczos), in its own format."""
    from PIL import Image  # Pillow: see image_size

    with Image.open(io.BytesIO(data)) as img:
        if img.size == (width, height):
            return data
        out = io.BytesIO()
        small = img.convert("RGB").resize((width, height), Image.Resampling.LANCZOS)
        if media_type == "image/jpeg":
            small.save(out, format="JPEG", quality=90)
        else:
            small.save(out, format="PNG", optimize=False)
        return out.getvalue()


def sized_for_sending(data: bytes, media_type: str, sizing: ImageSizing) -> bytes:
    """The image as it is sent under ``sizing`` (unchanged where it already fits)."""
    if sizing.mode == "none":
        return data
    width, height = image_size(data)
    target = sizing.size(width, height)
    return data if target == (width, height) else resized(data, media_type, *target)


def sizing_for(config: object) -> ImageSizing:
    """The image sizing a model role's settings ask for (``image_resize`` and its limits)."""
    return ImageSizing(getattr(config, "image_resize", None) or "none", getattr(config, "max_edge", None),
                       getattr(config, "max_pixels", None), getattr(config, "min_pixels", None),
                       getattr(config, "resize_factor", None))
