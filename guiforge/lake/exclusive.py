"""Compare-and-swap on one small file of a lake: what the run lock is made of.

Four operations, each atomic against every other process using them:

- ``create(path, data)``: the file appears with all of ``data`` or not at all, and only if no
  file was there; returns its version (None if a file was there);
- ``read(path)``: its bytes and a version (None if there is no file);
- ``swap(path, data, version)``: replace it only if it is still at ``version``; returns the
  new version (None if it had changed);
- ``delete(path, version)``: remove it only if it is still at ``version``.

How each filesystem gets there:

- **local**: ``create`` writes a temporary file and hard-links it into place (``link(2)``
  fails if the name exists, and the name appears with its whole content); ``swap`` and
  ``delete`` compare and act while holding an ``flock`` on a guard file beside the lock,
  which the kernel releases if the process dies (so the guard itself is never stale).
- **s3://**: conditional writes: ``create`` is a PUT with ``If-None-Match: *``, ``swap`` a PUT
  with ``If-Match: <ETag>``, ``delete`` a DELETE with ``If-Match`` (AWS S3 and MinIO honour
  them; a store that ignores them is only as safe as the generic case).
- **memory://** lives in one process: a process-wide mutex makes each operation atomic.
- **any other fsspec filesystem**: exclusive create where it has one (``mode="xb"``), else
  check-then-write; swap and delete compare then act. Best effort, said in the README.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import posixpath
import threading
import uuid
from collections.abc import Iterator

from guiforge.lake.store import TMP_MARK, Lake

_memory_mutex = threading.Lock()


def _version(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ExclusiveFile:
    """Compare-and-swap on files of one lake (see the module docstring)."""

    def __init__(self, lake: Lake):
        self.lake = lake
        self.fs = lake.fs
        self.kind = "local" if lake.is_local else ("s3" if lake.protocol in ("s3", "s3a") else
                                                   "memory" if lake.protocol == "memory" else "other")

    # -- reading ----------------------------------------------------------------------
    def read(self, path: str) -> tuple[bytes, str] | None:
        if self.kind == "s3":
            bucket, key, _ = self.fs.split_path(path)
            try:  # the ETag first: content read after it is that version or a newer one, so a swap
                # conditioned on it can only fail, never overwrite what was not read
                etag = self.fs.call_s3("head_object", Bucket=bucket, Key=key)["ETag"]
                data = self.fs.cat_file(path)
            except FileNotFoundError:
                return None
            return data, etag
        try:
            if self.kind == "local":
                with open(path, "rb") as fh:
                    data = fh.read()
            else:
                data = self.fs.cat_file(path)
        except FileNotFoundError:
            return None
        return data, _version(data)

    # -- creating ---------------------------------------------------------------------
    def create(self, path: str, data: bytes) -> str | None:
        self.fs.makedirs(posixpath.dirname(path), exist_ok=True)
        if self.kind == "local":
            tmp = f"{path}{TMP_MARK}{uuid.uuid4().hex[:12]}"
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(tmp, path)  # fails if the name exists; never replaces
                return _version(data)
            except FileExistsError:
                return None
            finally:
                os.unlink(tmp)
        if self.kind == "s3":
            try:
                self.fs.pipe_file(path, data, mode="create")
            except (FileExistsError, OSError) as exc:
                if _precondition_failed(exc):
                    return None
                raise
            return self._etag_of(path, data)
        with self._guard(path):
            try:
                with self.fs.open(path, "xb") as fh:
                    fh.write(data)
            except FileExistsError:
                return None
            except ValueError:  # no exclusive mode on this filesystem: check, then write
                if self.fs.exists(path):
                    return None
                self.fs.pipe_file(path, data)
            return _version(data)

    def _etag_of(self, path: str, data: bytes) -> str | None:
        """The ETag of what we just wrote (None if someone replaced it already)."""
        current = self.read(path)
        return current[1] if current and current[0] == data else None

    # -- conditional replace and delete ------------------------------------------------
    def swap(self, path: str, data: bytes, version: str) -> str | None:
        if self.kind == "s3":
            answer = self._s3_if_match("put_object", path, version, Body=data)
            return None if answer is None else answer.get("ETag") or self._etag_of(path, data)
        with self._guard(path):
            current = self.read(path)
            if current is None or current[1] != version:
                return None
            if self.kind == "local":
                tmp = f"{path}{TMP_MARK}{uuid.uuid4().hex[:12]}"
                with open(tmp, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, path)  # under the guard: nobody else swaps or deletes meanwhile
            else:
                self.fs.pipe_file(path, data)
            return _version(data)

    def delete(self, path: str, version: str) -> bool:
        if self.kind == "s3":
            return self._s3_if_match("delete_object", path, version) is not None
        with self._guard(path):
            current = self.read(path)
            if current is None or current[1] != version:
                return False
            if self.kind == "local":
                os.unlink(path)
            else:
                self.fs.rm(path)
            return True

    def _s3_if_match(self, method: str, path: str, version: str, **kwargs) -> dict | None:
        """An S3 call conditioned on the object's ETag; None if the store refused it (the
        object changed or is gone)."""
        bucket, key, _ = self.fs.split_path(path)
        try:
            return self.fs.call_s3(method, Bucket=bucket, Key=key, IfMatch=version, **kwargs)
        except (FileNotFoundError, OSError) as exc:
            if isinstance(exc, FileNotFoundError) or _precondition_failed(exc):
                return None
            raise
        finally:
            self.fs.invalidate_cache(path)

    @contextlib.contextmanager
    def _guard(self, path: str) -> Iterator[None]:
        """Mutual exclusion for compare-then-act: an flock (local), a mutex (memory)."""
        if self.kind == "local":
            fd = os.open(f"{path}.guard", os.O_CREAT | os.O_RDWR, 0o644)  # never deleted: no inode race
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # releases the flock
        elif self.kind == "memory":
            with _memory_mutex:
                yield
        else:
            yield


def _precondition_failed(exc: BaseException) -> bool:
    """A conditional write or delete that the store refused (HTTP 412, or 409 on a race)."""
    if isinstance(exc, FileExistsError):
        return True
    response = getattr(exc.__cause__, "response", None) or {}
    code = (response.get("Error") or {}).get("Code")
    return code in ("PreconditionFailed", "412", "ConditionalRequestConflict", "409") or "PreconditionFailed" in str(exc)
