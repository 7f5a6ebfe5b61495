"""The verifier worker's wire format: length-prefixed pickles, one request or verdict each,
spoken by the pool (runner.py) and the worker process (worker.py)."""

from __future__ import annotations

import pickle
import struct

READY = "ready"  # a worker's first message: its imports are done, so a deadline may start


def read_message(stream) -> object | None:
    header = stream.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack(">I", header)
    return pickle.loads(stream.read(size))


def write_message(stream, value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack(">I", len(data)) + data)
    stream.flush()
