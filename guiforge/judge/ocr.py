"""Screen text by tesseract OCR, cached by image hash.

The offline judge reads a few key frames per trajectory; the k samples of a task often end
on the same frame, so each distinct frame is read once: in memory for the process and in
the lake (``_cache/ocr``), so a rerun reads none again. At most ``workers`` tesseract
processes run at once, each single-threaded (``OMP_THREAD_LIMIT=1``): tesseract's own
threads only fight each other on a small machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from guiforge.lake.store import Lake


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

    def _ocr(self, data: bytes) -> str:
        env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
        with self._slots:
            proc = subprocess.run(["tesseract", "stdin", "stdout", "-l", self.lang, "--psm", "11"], input=data,
                                  capture_output=True, timeout=self.timeout_s, env=env, check=False,
                                  start_new_session=True)  # a group stop reaches guiforge first
        if proc.returncode != 0:
            raise RuntimeError(f"tesseract failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[:200]}")
        return proc.stdout.decode("utf-8", errors="replace")

    def read(self, sha: str, data: bytes) -> str:
        hit = self._cached(sha)
        if hit is not None:
            return hit
        text = self._ocr(data)
        with self._lock:
            self._memo[sha] = text
            self.read_count += 1
        if self.lake is not None:
            self.lake.write_json({"text": text, "engine": "tesseract", "lang": self.lang}, self._path(sha))
        return text

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
