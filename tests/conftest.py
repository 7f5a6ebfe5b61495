"""Shared fixtures."""

from __future__ import annotations

import pytest

from guiforge.testing.load import oversubscribed


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
