"""Screen text by tesseract OCR, cached by image hash.

The offline judge reads a few key frames per trajectory, and (:meth:`ScreenReader.read_points`)
the one line of text under a click that named no element (a LibreOffice menu item: the
desktop records no element under the pointer); the k samples of a task often end
on the same frame, so each distinct frame is read once: in memory for the process and in
the lake (``_cache/ocr``), so a rerun reads none again. At most ``workers`` tesseract
processes run at once, each single-threaded (``OMP_THREAD_LIMIT=1``): tesseract's own
threads only fight each other on a small machine.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from guiforge.envs.actions import to_pixels
from guiforge.lake.store import Lake

# The strip read around a click (pixels each side of the point), scaled up this much; the
# label is the run of words through the point with gaps under WORD_GAP (a menu item's
# shortcut column, the next button, sit further off).
STRIP_WIDTH, STRIP_HALF_HEIGHT, STRIP_SCALE, WORD_GAP = 160, 11, 2, 14


class OcrUnavailable(RuntimeError):
    """tesseract is not installed."""


class ScreenReader:
    def __init__(self, lake: Lake | None, workers: int = 2, timeout_s: float = 60.0, lang: str = "eng"):
        if shutil.which("tesseract") is None:
            raise OcrUnavailable("the offline judge needs tesseract: apt-get install tesseract-ocr "
                                 "(scripts/bootstrap.sh installs it)")
        self.lake = lake
        self.workers = workers
        self.timeout_s = timeout_s
        self.lang = lang
        self._memo: dict[str, str] = {}
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(workers)
        self.read_count = 0  # frames actually run through tesseract

    def _path(self, sha: str) -> str:
        assert self.lake is not None
        return self.lake.path("_cache", "ocr", sha[:2], f"{sha}.json")

    def _cached(self, sha: str) -> str | None:
        with self._lock:
            if sha in self._memo:
                return self._memo[sha]
        if self.lake is None:
            return None
        try:
            text = self.lake.read_json(self._path(sha))["text"]
        except (FileNotFoundError, KeyError, TypeError, ValueError):
            return None
        with self._lock:
            self._memo[sha] = text
        return text

    def _ocr(self, data: bytes, psm: str = "11") -> str:
        env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
        with self._slots:
            proc = subprocess.run(["tesseract", "stdin", "stdout", "-l", self.lang, "--psm", *psm.split()], input=data,
                                  capture_output=True, timeout=self.timeout_s, env=env, check=False,
                                  start_new_session=True)  # a group stop reaches guiforge first
        if proc.returncode != 0:
            raise RuntimeError(f"tesseract failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[:200]}")
        return proc.stdout.decode("utf-8", errors="replace")

    def _remembered(self, key: str, read: Callable[[], str]) -> str:
        """The text cached under ``key``, else ``read()``'s, kept in memory and in the lake."""
        hit = self._cached(key)
        if hit is not None:
            return hit
        text = read()
        with self._lock:
            self._memo[key] = text
            self.read_count += 1
        if self.lake is not None:
            self.lake.write_json({"text": text, "engine": "tesseract", "lang": self.lang}, self._path(key))
        return text

    def read(self, sha: str, data: bytes) -> str:
        return self._remembered(sha, lambda: self._ocr(data))

    def read_many(self, frames: Iterable[tuple[str, bytes]]) -> dict[str, str]:
        """Text of every (sha256, bytes) frame, distinct uncached frames read in parallel."""
        todo = dict(frames)
        out = {sha: hit for sha in todo if (hit := self._cached(sha)) is not None}
        missing = [sha for sha in todo if sha not in out]
        if missing:
            with ThreadPoolExecutor(min(self.workers, len(missing)), thread_name_prefix="ocr") as pool:
                for sha, text in zip(missing, pool.map(lambda s: self.read(s, todo[s]), missing), strict=True):
                    out[sha] = text
        return out

    def read_point(self, sha: str, data: bytes, gx: int, gy: int) -> str:
        """The line of text under grid point (gx, gy) of a frame: a strip around the point,
        scaled up twice, read as one line (``--psm 7``); cached like whole frames."""
        def read() -> str:
            strip, point = _strip(data, gx, gy)
            return _label_at(self._ocr(strip, psm="7 tsv"), point)

        return self._remembered(f"{sha}_at_{gx}_{gy}", read)

    def read_points(self, points: Iterable[tuple[str, int, int]], images: dict[str, bytes]) -> dict[tuple, str]:
        """Text under each (sha256, gx, gy) whose frame is in ``images``, read in parallel."""
        todo = list(dict.fromkeys(p for p in points if p[0] in images))
        if not todo:
            return {}
        with ThreadPoolExecutor(min(self.workers, len(todo)), thread_name_prefix="ocr") as pool:
            texts = pool.map(lambda p: self.read_point(p[0], images[p[0]], p[1], p[2]), todo)
            return dict(zip(todo, texts, strict=True))


def _strip(data: bytes, gx: int, gy: int) -> tuple[bytes, int]:
    """PNG of the strip around grid point (gx, gy), scaled up (tesseract reads small UI text
    better larger), and the point's x in it."""
    # heavy: PIL, imported when a point is read
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        x, y = to_pixels(gx, gy, im.width, im.height)
        left = max(0, x - STRIP_WIDTH)
        box = (left, max(0, y - STRIP_HALF_HEIGHT), min(im.width, x + STRIP_WIDTH), min(im.height, y + STRIP_HALF_HEIGHT))
        strip = im.convert("L").crop(box)
        strip = strip.resize((strip.width * STRIP_SCALE, strip.height * STRIP_SCALE), Image.Resampling.LANCZOS)
        out = io.BytesIO()
        strip.save(out, format="PNG")
        return out.getvalue(), (x - left) * STRIP_SCALE


def _label_at(tsv: str, x: int) -> str:
    """The words through ``x`` in tesseract's TSV of one line: the word under the point (or
    the nearest one within a gap), then its neighbours while the gaps stay small."""
    words = []
    for line in tsv.splitlines()[1:]:
        f = line.split("\t")
        if len(f) == 12 and f[11].strip() and float(f[10]) >= 0:
            words.append((int(f[6]), int(f[6]) + int(f[8]), f[11].strip()))
    words.sort()
    gap = WORD_GAP * STRIP_SCALE
    near = [i for i, (a, b, _) in enumerate(words) if a - gap <= x <= b + gap]
    if not near:
        return ""
    i = j = min(near, key=lambda k: 0 if words[k][0] <= x <= words[k][1] else min(abs(words[k][0] - x),
                                                                                    abs(words[k][1] - x)))
    while i > 0 and words[i][0] - words[i - 1][1] <= gap:
        i -= 1
    while j < len(words) - 1 and words[j + 1][0] - words[j][1] <= gap:
        j += 1
    return " ".join(w for _, _, w in words[i:j + 1])
