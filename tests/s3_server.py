"""A local S3-compatible server for the storage tests: moto's server mode on
127.0.0.1, on a port the OS picks, stopped when the tests are done.

Credentials and region are set explicitly (fake ones moto accepts) and the
instance-metadata lookup and shared config files are switched off, so boto3
never looks beyond the test's own server."""

from __future__ import annotations

import logging
import uuid

import pytest

moto_server = pytest.importorskip(
    "moto.moto_server.threaded_moto_server",
    reason="moto[server] is not installed (pip install -e '.[dev]')",
)

ACCESS_KEY = "test-access-key"
SECRET_KEY = "test-secret-key"
REGION = "us-east-1"

# What boto3 reads from the environment, pinned for the tests.
AWS_ENV = {
    "AWS_ACCESS_KEY_ID": ACCESS_KEY,
    "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
    "AWS_DEFAULT_REGION": REGION,
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": "/nonexistent/aws-config",
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/aws-credentials",
    "NO_PROXY": "127.0.0.1,localhost",
}


@pytest.fixture(scope="session")
def s3_endpoint():
    """The endpoint URL of a moto server running for the whole session."""
    # One log line per request would bury a failing test's own output.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def aws_env(monkeypatch):
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in AWS_ENV.items():
        monkeypatch.setenv(name, value)


def s3_client(endpoint: str):
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )


@pytest.fixture
def bucket(s3_endpoint, aws_env) -> str:
    """A new, empty bucket for one test."""
    name = f"test-{uuid.uuid4().hex[:16]}"
    s3_client(s3_endpoint).create_bucket(Bucket=name)
    return name


def s3_env(endpoint: str, bucket: str, **extra: str) -> dict[str, str]:
    """The variables that point config/settings.py at the test's bucket."""
    return {
        **AWS_ENV,
        "S3_BUCKET": bucket,
        "S3_ENDPOINT_URL": endpoint,
        "S3_REGION": REGION,
        "S3_ACCESS_KEY_ID": ACCESS_KEY,
        "S3_SECRET_ACCESS_KEY": SECRET_KEY,
        "S3_ADDRESSING_STYLE": "path",
        **extra,
    }


def object_keys(endpoint: str, bucket: str, prefix: str = "") -> list[str]:
    client = s3_client(endpoint)
    keys: list[str] = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys.extend(obj["Key"] for obj in page.get("Contents", []))
    return sorted(keys)


def object_bytes(endpoint: str, bucket: str, key: str) -> bytes:
    return s3_client(endpoint).get_object(Bucket=bucket, Key=key)["Body"].read()
