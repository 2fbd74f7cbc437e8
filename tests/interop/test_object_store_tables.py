"""Tables whose warehouse is an object store: s3:// on moto_server and gs:// on the GCS emulator.

The catalog is a SQL catalog on a local SQLite file (a --catalog-config file); the table's metadata,
manifests and data live in the bucket. The test creates, appends (Parquet and JSON Lines), deletes
(deletion vectors on v3, position deletes on v2) and scans through the real `lakesync` binary, then
checks from the outside:

- every file the metadata and manifests name is an object in the bucket (boto3 / the GCS JSON API),
  with the byte size the manifests record;
- pyiceberg, configured with the same endpoint properties, reads the table row for row as
  lakesync does and as the rows computed here say;
- `table drop --purge` removes the table's objects.

Files stay small: the GCS emulator is single-threaded and hangs on large ranged reads (see
test_object_stores.py).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import random
import uuid
from urllib.parse import quote

import pytest

import oracles as O

pytestmark = O.needs_lakesync

boto3 = pytest.importorskip("boto3")
requests = pytest.importorskip("requests")
pa = pytest.importorskip("pyarrow")

BUCKET = "lakesync-tables"
ACCESS_KEY, SECRET_KEY = "lakesync-test-key", "lakesync-test-secret"

COLUMNS = [
    {"name": "id", "type": "long", "required": True},
    {"name": "s", "type": "string", "required": False},
    {"name": "d", "type": "date", "required": False},
    {"name": "amount", "type": "decimal(9, 2)", "required": False},
    {"name": "ts", "type": "timestamptz", "required": False},
    {"name": "tags", "type": {"type": "list", "element": "string", "element-required": False}, "required": False},
]


def make_rows(n: int, seed: int) -> list[tuple]:
    r = random.Random(seed)
    rows = []
    for i in range(n):
        rows.append((
            i,
            None if r.random() < 0.1 else "".join(r.choice("abcé日") for _ in range(r.randint(0, 5))),
            None if r.random() < 0.1 else dt.date(2024, 1, 1) + dt.timedelta(days=r.randint(0, 60)),
            None if r.random() < 0.1 else decimal.Decimal(r.randint(-10**6, 10**6)).scaleb(-2),
            None if r.random() < 0.1 else r.randint(0, 2 * 10**15),
            None if r.random() < 0.1 else tuple(r.choice(["x", "y", None]) for _ in range(r.randint(0, 3))),
        ))
    return rows


# ---------------------------------------------------------------------------------------------
# Servers


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    port = O.free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    proc = O.start_server([O.venv_tool("moto_server"), "-H", "127.0.0.1", "-p", str(port)], endpoint + "/", log)
    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ACCESS_KEY,
                          aws_secret_access_key=SECRET_KEY, region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    yield {"endpoint": endpoint, "client": client}
    O.stop_server(proc)


@pytest.fixture(scope="module")
def gcs(tmp_path_factory):
    port = O.free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("gcs") / "gcs.log"
    proc = O.start_server([O.venv_tool("gcp-storage-emulator"), "start", "--host", "127.0.0.1", "--port", str(port),
                           "--in-memory"], endpoint + "/storage/v1/b", log)
    r = requests.post(f"{endpoint}/storage/v1/b", params={"project": "lakesync-test"}, json={"name": BUCKET},
                      timeout=10)
    assert r.status_code == 200, r.text
    yield {"endpoint": endpoint}
    O.stop_server(proc)


class S3Store:
    scheme = "s3"

    def __init__(self, moto):
        self.client = moto["client"]
        self.endpoint = moto["endpoint"]
        self.lakesync_props = {"s3.endpoint": self.endpoint, "s3.access-key-id": ACCESS_KEY,
                               "s3.secret-access-key": SECRET_KEY, "s3.region": "us-east-1"}
        self.pyiceberg_props = dict(self.lakesync_props)

    def objects(self, prefix: str) -> dict[str, int]:
        out = {}
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
            out.update({o["Key"]: o["Size"] for o in page.get("Contents", []) if not o["Key"].endswith("/")})
        return out

    def read(self, key: str) -> bytes:
        return self.client.get_object(Bucket=BUCKET, Key=key)["Body"].read()


class GcsStore:
    scheme = "gs"

    def __init__(self, gcs):
        self.endpoint = gcs["endpoint"]
        self.lakesync_props = {"gcs.endpoint": self.endpoint, "gcs.retry-limit-seconds": "10"}
        # pyiceberg hands gcs.service.host to Arrow's GcsFileSystem; a fixed token keeps it from
        # looking for Google credentials (the emulator ignores authorisation).
        self.pyiceberg_props = {"gcs.service.host": self.endpoint, "gcs.oauth2.token": "test-token",
                                "gcs.oauth2.token-expires-at": str(int(4e12))}

    def objects(self, prefix: str) -> dict[str, int]:
        r = requests.get(f"{self.endpoint}/storage/v1/b/{BUCKET}/o", params={"prefix": prefix}, timeout=30)
        assert r.status_code == 200, r.text
        return {item["name"]: int(item["size"]) for item in r.json().get("items", []) if not item["name"].endswith("/")}

    def read(self, key: str) -> bytes:
        r = requests.get(f"{self.endpoint}/storage/v1/b/{BUCKET}/o/{quote(key, safe='')}", params={"alt": "media"},
                         timeout=30)
        assert r.status_code == 200, (key, r.status_code)
        return r.content


@pytest.fixture(params=["s3", "gcs"])
def store(request):
    if request.param == "s3":
        return S3Store(request.getfixturevalue("moto"))
    return GcsStore(request.getfixturevalue("gcs"))


def key_of(location: str) -> str:
    """s3://bucket/a/b -> a/b."""
    scheme, rest = location.split("://", 1)
    bucket, key = rest.split("/", 1)
    assert bucket == BUCKET, location
    return key


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [2, 3])
def test_table_on_an_object_store(tmp_path, store, version):
    prefix = f"wh-{uuid.uuid4().hex[:10]}"
    warehouse = f"{store.scheme}://{BUCKET}/{prefix}"
    config = O.write_yaml(tmp_path / "catalog.yaml", {
        "catalog_name": "objects",
        "catalog_properties": {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": warehouse,
                               **store.lakesync_props}})
    cli = O.Cli(tmp_path, catalog_config=config)
    cli.ok("namespace", "create", "ns")
    schema = O.schema_file(tmp_path / "schema.yaml", COLUMNS)
    cli.ok("table", "create", "ns.t", "--schema", schema, "--format-version", version, "--partition", "month(d)")
    assert not (tmp_path / "wh").exists(), "the embedded catalog must not be touched"

    rows = make_rows(120, seed=version)
    parquet = O.write_parquet(tmp_path / "a.parquet", rows[:80], COLUMNS)
    jsonl = O.write_jsonl(tmp_path / "b.jsonl", rows[80:], COLUMNS)
    cli.ok("table", "append", "ns.t", parquet, jsonl)
    cli.ok("table", "delete", "ns.t", "--where", "amount < 0 OR s IS NULL")
    deleted = {r[0] for r in rows if r[1] is None or (r[3] is not None and r[3] < 0)}
    cli.ok("table", "delete", "ns.t", "--where", "id IN (3, 4, 5, 100)")  # a second delete: DVs merge on v3
    deleted |= {3, 4, 5, 100}
    remaining = [r for r in rows if r[0] not in deleted]
    want = O.normalise_rows(remaining, COLUMNS, "python")

    got = O.normalise_rows(cli.scan_jsonl("ns.t"), COLUMNS, "jsonl")
    O.assert_same_rows(got, want, f"lakesync scan on {store.scheme}")

    # The objects: every file the table's metadata, manifest lists and manifests name exists, with
    # the size the manifests record.
    metadata = cli.metadata("ns.t")
    assert metadata["location"].startswith(f"{warehouse}/"), metadata["location"]
    table_prefix = key_of(metadata["location"]) + "/"
    objects = store.objects(table_prefix)
    [row] = [r for r in O.catalog_rows(tmp_path / "catalog.db") if r[2] == "t"]
    metadata_location = row[3]
    assert key_of(metadata_location) in objects
    assert json.loads(store.read(key_of(metadata_location)))["table-uuid"] == metadata["table-uuid"]
    named = set()
    for snapshot in metadata["snapshots"]:
        named.add(key_of(snapshot["manifest-list"]))
    import fastavro
    import io

    sizes = {}
    for key in sorted(named):
        for manifest in fastavro.reader(io.BytesIO(store.read(key))):
            named.add(key_of(manifest["manifest_path"]))
            assert objects.get(key_of(manifest["manifest_path"])) == manifest["manifest_length"]
            for entry in fastavro.reader(io.BytesIO(store.read(key_of(manifest["manifest_path"])))):
                f = entry["data_file"]
                sizes[key_of(f["file_path"])] = f["file_size_in_bytes"]
    for key, size in sizes.items():
        assert objects.get(key) == size, f"{key}: object size {objects.get(key)}, manifest says {size}"
    kinds = {k.rsplit(".", 1)[-1] for k in sizes}
    assert kinds == ({"parquet", "puffin"} if version == 3 else {"parquet"})
    assert named <= set(objects)

    # pyiceberg with the same endpoint properties, over the same SQLite catalog.
    from pyiceberg.catalog import load_catalog

    catalog = load_catalog("objects", type="sql", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=warehouse,
                           **store.pyiceberg_props)
    table = catalog.load_table("ns.t")
    O.assert_same_rows(O.arrow_rows(table.scan().to_arrow(), COLUMNS), want, f"pyiceberg on {store.scheme}")
    first = table.metadata.snapshots[0].snapshot_id
    got = O.normalise_rows(cli.scan_jsonl("ns.t", "--snapshot-id", first), COLUMNS, "jsonl")
    O.assert_same_rows(got, O.normalise_rows(rows, COLUMNS, "python"), "time travel to the append")

    # Drop with --purge removes the objects.
    cli.ok("table", "drop", "ns.t", "--purge")
    assert store.objects(table_prefix) == {}
    assert [r for r in O.catalog_rows(tmp_path / "catalog.db") if r[2] == "t"] == []
