from __future__ import annotations

import shutil

import pytest

from guiforge.envs.sandbox import Limits, MiB, Sandbox

# Small limits so that every escape attempt hits its wall within a second or two.
TEST_LIMITS = Limits(cpu_s=1, memory_bytes=256 * MiB, nproc=48, file_bytes=16 * MiB,
                     tmp_bytes=32 * MiB, output_bytes=64 * 1024)
QUOTA = 64 * MiB

if shutil.which("bwrap") is None:
    pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)", allow_module_level=True)


@pytest.fixture
def sandbox():
    sb = Sandbox.create(quota_bytes=QUOTA, limits=TEST_LIMITS)
    try:
        yield sb
    finally:
        sb.close()


@pytest.fixture
def shell(sandbox):
    session = sandbox.shell()
    try:
        yield session
    finally:
        session.close()
