"""Shared fixtures."""

from __future__ import annotations

import os

import pytest

from guiforge.testing.load import oversubscribed


def pytest_addoption(parser):
    parser.addoption("--battery", action="store_true", default=False,
                     help="also run the long batteries (every card through the package gate, ...)")


def pytest_configure(config):
    """Faker's locale providers are imported here, once, on the main thread. Faker is a
    pytest plugin, so pytest's assertion rewriter parses each of its modules with
    ``ast.parse``; CPython 3.11's AST validator keeps its recursion depth in shared state,
    and two worker threads importing providers at once fail with "AST constructor recursion
    depth mismatch" (a test-only fault: outside pytest, imports do not go through ast)."""
    from guiforge.worlds.runtime import shared_faker
    from guiforge.worlds.seeds import load_persona_seeds

    for locale in load_persona_seeds().locales:
        shared_faker(locale)


def pytest_collection_modifyitems(config, items):
    """Tests marked ``battery`` run only with --battery (or GUIFORGE_BATTERY=1): CI runs their
    fixed short variants, a person or a nightly job runs the whole battery."""
    if config.getoption("--battery") or os.environ.get("GUIFORGE_BATTERY") == "1":
        return
    skip = pytest.mark.skip(reason="a long battery: run with --battery")
    for item in items:
        if "battery" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def s3_uri():
    """An S3 bucket served by moto on loopback: (lake URI, storage options)."""
    moto = pytest.importorskip("moto.server")
    pytest.importorskip("s3fs")
    import boto3

    server = moto.ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="test",
                 aws_secret_access_key="test").create_bucket(Bucket="lake-bucket")
    yield "s3://lake-bucket/lake", {"key": "test", "secret": "test",
                                    "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"}}
    server.stop()


@pytest.fixture
def oversubscribed_cores():
    """Every core oversubscribed by busy processes while the test runs (three per core, at
    least six: guiforge.testing.load); yields their pids."""
    with oversubscribed() as pids:
        yield pids
