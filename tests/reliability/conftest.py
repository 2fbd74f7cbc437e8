"""Fixtures of the reliability suites: object-store emulators (moto for s3://, the GCS emulator for
gs://) behind a fault-injecting proxy, and helpers that tell which files of a table are referenced."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import quote

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import oracles as O  # noqa: E402
from fault_proxy import FaultProxy  # noqa: E402

from object_store_support import ACCESS_KEY, BUCKET, SECRET_KEY, key_of, referenced_keys  # noqa: E402,F401


@pytest.fixture(scope="session")
def moto_server(tmp_path_factory):
    boto3 = pytest.importorskip("boto3")
    port = O.free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    proc = O.start_server([O.venv_tool("moto_server"), "-H", "127.0.0.1", "-p", str(port)], endpoint + "/", log)
    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ACCESS_KEY,
                          aws_secret_access_key=SECRET_KEY, region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    yield {"endpoint": endpoint, "port": port, "client": client}
    O.stop_server(proc)


@pytest.fixture(scope="session")
def gcs_server(tmp_path_factory):
    requests = pytest.importorskip("requests")
    port = O.free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("gcs") / "gcs.log"
    proc = O.start_server([O.venv_tool("gcp-storage-emulator"), "start", "--host", "127.0.0.1", "--port", str(port),
                           "--in-memory"], endpoint + "/storage/v1/b", log)
    r = requests.post(f"{endpoint}/storage/v1/b", params={"project": "lakesync-test"}, json={"name": BUCKET},
                      timeout=10)
    assert r.status_code == 200, r.text
    yield {"endpoint": endpoint, "port": port}
    O.stop_server(proc)


class Store:
    """One object store seen through a fault proxy: lakesync's properties point at the proxy, the
    test's own listing goes to the emulator directly."""

    def __init__(self, scheme: str, server: dict):
        self.scheme = scheme
        self.server = server
        self.proxy = FaultProxy("127.0.0.1", server["port"], "s3" if scheme == "s3" else "gcs")
        if scheme == "s3":
            self.props = {"s3.endpoint": self.proxy.endpoint, "s3.access-key-id": ACCESS_KEY,
                          "s3.secret-access-key": SECRET_KEY, "s3.region": "us-east-1",
                          "s3.request-timeout": "3", "s3.connect-timeout": "2"}
        else:
            self.props = {"gcs.endpoint": self.proxy.endpoint, "gcs.retry-limit-seconds": "20"}

    def keys(self, prefix: str) -> set[str]:
        if self.scheme == "s3":
            out = set()
            for page in self.server["client"].get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
                out.update(o["Key"] for o in page.get("Contents", []) if not o["Key"].endswith("/"))
            return out
        import requests

        out, token = set(), None
        while True:
            params = {"prefix": prefix, **({"pageToken": token} if token else {})}
            r = requests.get(f"{self.server['endpoint']}/storage/v1/b/{BUCKET}/o", params=params, timeout=30)
            assert r.status_code == 200, r.text
            body = r.json()
            out.update(i["name"] for i in body.get("items", []) if not i["name"].endswith("/"))
            token = body.get("nextPageToken")
            if not token:
                return out

    def read(self, key: str) -> bytes:
        if self.scheme == "s3":
            return self.server["client"].get_object(Bucket=BUCKET, Key=key)["Body"].read()
        import requests

        r = requests.get(f"{self.server['endpoint']}/storage/v1/b/{BUCKET}/o/{quote(key, safe='')}",
                         params={"alt": "media"}, timeout=30)
        assert r.status_code == 200, (key, r.status_code)
        return r.content


@pytest.fixture
def s3_store(moto_server):
    store = Store("s3", moto_server)
    yield store
    store.proxy.stop()


@pytest.fixture
def gcs_store(gcs_server):
    store = Store("gs", gcs_server)
    yield store
    store.proxy.stop()


@pytest.fixture(params=["s3", "gs"])
def store(request):
    return request.getfixturevalue("s3_store" if request.param == "s3" else "gcs_store")
