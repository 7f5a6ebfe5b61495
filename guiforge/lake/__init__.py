"""The lake: Parquet shards committed atomically, content-addressed images and blobs."""

from guiforge.lake.blobs import ContentStore, ShardContent
from guiforge.lake.fingerprint import canonical_json, fingerprint, sha256_bytes
from guiforge.lake.store import Lake, ShardFile
from guiforge.lake.writer import SchemaViolation, ShardCommit, commit_shard, to_arrow

__all__ = [
    "ContentStore",
    "Lake",
    "SchemaViolation",
    "ShardCommit",
    "ShardContent",
    "ShardFile",
    "canonical_json",
    "commit_shard",
    "fingerprint",
    "sha256_bytes",
    "to_arrow",
]
