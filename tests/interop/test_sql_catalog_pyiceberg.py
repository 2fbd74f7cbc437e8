"""The SQL catalog on SQLite, shared with pyiceberg 0.12's SqlCatalog on one database file.

lakesync's catalog is driven through the `catalog_probe` program (tests/tools/catalog_probe.cc),
found in LAKESYNC_BUILD_DIR (default /work/main/build). The oracle is pyiceberg
(`load_catalog(..., type="sql", uri="sqlite:////abs/catalog.db", warehouse="file:///abs/wh")`):

- what lakesync creates (database tables, namespaces, tables, commits) pyiceberg lists and loads,
  with the schema, partition spec and properties we asked for;
- what pyiceberg creates (including a data append, i.e. a snapshot) lakesync lists and loads;
- a fresh database created by lakesync has the same DDL as one created by pyiceberg.

Expectations come from the inputs each side was given, never from the other implementation's
output alone.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

pyiceberg_catalog = pytest.importorskip("pyiceberg.catalog")
pa = pytest.importorskip("pyarrow")

BUILD_DIR = Path(os.environ.get("LAKESYNC_BUILD_DIR", "/work/main/build"))
PROBE = BUILD_DIR / "catalog_probe"

pytestmark = pytest.mark.skipif(
    not PROBE.exists(),
    reason=f"{PROBE} is not built (build the catalog_probe target; set LAKESYNC_BUILD_DIR to the build dir)",
)

CATALOG_NAME = "lakesync"

# The table lakesync creates: types that exercise the schema JSON, and a two-field partition spec.
OUR_SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "identifier-field-ids": [1],
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "name", "required": False, "type": "string"},
        {"id": 3, "name": "ts", "required": False, "type": "timestamptz"},
        {"id": 4, "name": "amount", "required": False, "type": "decimal(10, 2)"},
        {
            "id": 5,
            "name": "tags",
            "required": False,
            "type": {"type": "list", "element-id": 6, "element": "string", "element-required": False},
        },
    ],
}
OUR_SPEC = {
    "spec-id": 0,
    "fields": [
        {"source-id": 1, "field-id": 1000, "name": "id_bucket", "transform": "bucket[4]"},
        {"source-id": 3, "field-id": 1001, "name": "ts_day", "transform": "day"},
    ],
}


@pytest.fixture()
def env(tmp_path: Path):
    db = tmp_path / "catalog.db"
    wh = tmp_path / "wh"
    wh.mkdir()
    return {"db": db, "wh": wh, "uri": f"sqlite:///{db}", "warehouse": f"file://{wh}"}


def probe(env, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    cmd = [
        str(PROBE),
        "--name",
        CATALOG_NAME,
        "--prop",
        "type=sql",
        "--prop",
        f"uri={env['uri']}",
        "--prop",
        f"warehouse={env['warehouse']}",
        *args,
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({result.returncode}): {result.stderr}")
    return result


def probe_json(env, *args: str):
    return json.loads(probe(env, *args).stdout)


def pyiceberg(env):
    return pyiceberg_catalog.load_catalog(CATALOG_NAME, type="sql", uri=env["uri"], warehouse=env["warehouse"])


def schema_fields_json(schema) -> list[dict]:
    """pyiceberg's schema as Iceberg JSON fields (pyiceberg's own serializer)."""
    return json.loads(schema.model_dump_json())["fields"]


def normalize_fields(fields: list[dict]) -> list[dict]:
    # Optional keys a writer may omit ("doc", defaults) are dropped from both sides.
    def norm(value):
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items() if v is not None and k not in ("doc",)}
        if isinstance(value, list):
            return [norm(v) for v in value]
        return value

    return norm(fields)


def ddl(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
    return {name: " ".join(sql.split()) for name, sql in rows}


def test_fresh_database_ddl_matches_pyiceberg(env, tmp_path):
    probe_json(env, "create-namespace", "x")
    other = {"db": tmp_path / "py.db", "uri": f"sqlite:///{tmp_path / 'py.db'}", "warehouse": env["warehouse"]}
    pyiceberg(other).create_namespace("x")
    ours = ddl(env["db"])
    theirs = ddl(other["db"])
    assert set(ours) == {"iceberg_tables", "iceberg_namespace_properties"}
    assert ours == theirs


def test_pyiceberg_reads_what_lakesync_wrote(env):
    probe_json(env, "create-namespace", "ours", "owner=lakesync")
    probe_json(env, "create-namespace", "ours.nested")
    probe_json(env, "create-namespace", "we_1")  # '_' must not make "weX1"-style names match
    created = probe_json(
        env,
        "create-table",
        "ours.nested.events",
        json.dumps(OUR_SCHEMA),
        "--spec",
        json.dumps(OUR_SPEC),
        "--table-prop",
        "owner=probe",
    )
    gz = probe_json(
        env,
        "create-table",
        "ours.compressed",
        json.dumps(OUR_SCHEMA),
        "--table-prop",
        "write.metadata.compression-codec=gzip",
    )
    assert gz["metadata_location"].endswith(".gz.metadata.json")
    committed = probe_json(env, "commit-property", "ours.nested.events", "lakesync.marker", "42")
    assert "/00001-" in committed["metadata_location"]
    assert committed["metadata_location"] != created["metadata_location"]

    cat = pyiceberg(env)
    assert sorted(cat.list_namespaces()) == [("ours",), ("we_1",)]
    assert cat.list_namespaces("ours") == [("ours", "nested")]
    assert cat.list_namespaces("we_1") == []
    assert not cat.namespace_exists("weX1")
    assert cat.list_tables("ours.nested") == [("ours", "nested", "events")]
    assert cat.list_tables("ours") == [("ours", "compressed")]
    assert cat.load_namespace_properties("ours")["owner"] == "lakesync"

    table = cat.load_table("ours.nested.events")
    assert table.metadata_location == committed["metadata_location"]
    assert table.location() == f"{env['warehouse']}/ours/nested/events"
    assert normalize_fields(schema_fields_json(table.schema())) == normalize_fields(OUR_SCHEMA["fields"])
    assert table.schema().identifier_field_ids == [1]
    spec = table.spec()
    assert [(f.source_id, f.field_id, f.name, str(f.transform)) for f in spec.fields] == [
        (1, 1000, "id_bucket", "bucket[4]"),
        (3, 1001, "ts_day", "day"),
    ]
    assert table.properties["owner"] == "probe"
    assert table.properties["lakesync.marker"] == "42"
    assert table.metadata.format_version == 2
    assert [entry.metadata_file for entry in table.metadata.metadata_log] == [created["metadata_location"]]
    assert table.scan().to_arrow().num_rows == 0

    compressed = cat.load_table("ours.compressed")
    assert compressed.metadata_location == gz["metadata_location"]
    assert normalize_fields(schema_fields_json(compressed.schema())) == normalize_fields(OUR_SCHEMA["fields"])

    # The rows carry the configured catalog name and iceberg_type = 'TABLE'.
    with sqlite3.connect(env["db"]) as conn:
        rows = conn.execute(
            "SELECT catalog_name, table_namespace, table_name, iceberg_type, previous_metadata_location "
            "FROM iceberg_tables ORDER BY table_name"
        ).fetchall()
    assert rows == [
        (CATALOG_NAME, "ours", "compressed", "TABLE", None),
        (CATALOG_NAME, "ours.nested", "events", "TABLE", created["metadata_location"]),
    ]


def test_lakesync_reads_what_pyiceberg_wrote(env):
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform, TruncateTransform
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, StructType

    cat = pyiceberg(env)
    cat.create_namespace("py", {"team": "data"})
    cat.create_namespace("py.deep")
    schema = Schema(
        NestedField(1, "item_id", LongType(), required=True),
        NestedField(2, "category", StringType(), required=False),
        NestedField(3, "price", DoubleType(), required=False),
        NestedField(4, "dims", StructType(NestedField(5, "w", LongType(), required=False)), required=False),
        identifier_field_ids=[1],
    )
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category"),
        PartitionField(source_id=2, field_id=1001, transform=TruncateTransform(3), name="category_trunc"),
    )
    table = cat.create_table("py.deep.items", schema=schema, partition_spec=spec, properties={"k": "v"})

    assert probe_json(env, "list-namespaces") == [["py"]]
    assert probe_json(env, "list-namespaces", "py") == [["py", "deep"]]
    assert probe_json(env, "list-tables", "py.deep") == ["py.deep.items"]
    assert probe_json(env, "list-tables", "py") == []
    assert probe_json(env, "namespace-properties", "py") == {"team": "data"}

    loaded = probe_json(env, "load-table", "py.deep.items")
    assert loaded["metadata_location"] == table.metadata_location
    metadata = loaded["metadata"]
    assert metadata["table-uuid"] == str(table.metadata.table_uuid)
    current = next(s for s in metadata["schemas"] if s["schema-id"] == metadata["current-schema-id"])
    assert normalize_fields(current["fields"]) == normalize_fields(schema_fields_json(schema))
    assert current["identifier-field-ids"] == [1]
    default_spec = next(s for s in metadata["partition-specs"] if s["spec-id"] == metadata["default-spec-id"])
    assert [(f["source-id"], f["field-id"], f["name"], f["transform"]) for f in default_spec["fields"]] == [
        (2, 1000, "category", "identity"),
        (2, 1001, "category_trunc", "truncate[3]"),
    ]
    assert metadata["properties"]["k"] == "v"

    # Our commit on pyiceberg's table continues its numbering; pyiceberg sees it.
    committed = probe_json(env, "commit-property", "py.deep.items", "from", "lakesync")
    assert "/00001-" in committed["metadata_location"]
    reloaded = cat.load_table("py.deep.items")
    assert reloaded.metadata_location == committed["metadata_location"]
    assert reloaded.properties["from"] == "lakesync"
    assert reloaded.properties["k"] == "v"

    # Namespace rules agree: pyiceberg refuses to drop a namespace we still see tables in, and a
    # namespace pyiceberg drops is gone for us.
    result = probe(env, "drop-namespace", "py.deep", check=False)
    assert result.returncode == 1
    assert result.stderr.split("\t")[:2] == ["error", "namespace not empty"], result.stderr
    cat.drop_table("py.deep.items")
    cat.drop_namespace("py.deep")
    assert probe_json(env, "list-namespaces", "py") == []


def test_lakesync_loads_pyiceberg_append(env):
    schema = {
        "type": "struct",
        "schema-id": 0,
        "fields": [
            {"id": 1, "name": "id", "required": True, "type": "long"},
            {"id": 2, "name": "name", "required": False, "type": "string"},
        ],
    }
    probe_json(env, "create-namespace", "app")
    created = probe_json(env, "create-table", "app.t", json.dumps(schema))
    assert created["metadata"].get("current-snapshot-id", -1) in (None, -1)

    cat = pyiceberg(env)
    table = cat.load_table("app.t")
    data = pa.table(
        {"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", None], pa.string())},
        schema=pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())]),
    )
    table.append(data)
    snapshot = table.current_snapshot()
    assert snapshot is not None

    loaded = probe_json(env, "load-table", "app.t")
    assert loaded["metadata_location"] == table.metadata_location
    metadata = loaded["metadata"]
    assert metadata["current-snapshot-id"] == snapshot.snapshot_id
    ours = next(s for s in metadata["snapshots"] if s["snapshot-id"] == snapshot.snapshot_id)
    assert ours["manifest-list"] == snapshot.manifest_list
    assert ours["summary"]["added-records"] == "3"
    assert metadata["refs"]["main"]["snapshot-id"] == snapshot.snapshot_id

    # A lakesync commit on top keeps pyiceberg's snapshot; pyiceberg still reads the rows.
    committed = probe_json(env, "commit-property", "app.t", "after", "append")
    assert committed["metadata"]["current-snapshot-id"] == snapshot.snapshot_id
    reread = cat.load_table("app.t")
    assert reread.metadata_location == committed["metadata_location"]
    assert reread.properties["after"] == "append"
    rows = reread.scan().to_arrow().sort_by("id")
    assert rows.column("id").to_pylist() == [1, 2, 3]
    assert rows.column("name").to_pylist() == ["a", "b", None]

    # And pyiceberg appends again after our commit: the chain continues for both.
    reread.append(data)
    again = probe_json(env, "load-table", "app.t")
    assert again["metadata_location"] == reread.metadata_location
    assert len(again["metadata"]["snapshots"]) == 2
    assert again["metadata"]["properties"]["after"] == "append"


def test_concurrent_commits_from_processes_and_pyiceberg(env):
    """Several lakesync processes and pyiceberg commit to one table at once (busy timeout, CAS)."""
    from concurrent.futures import ThreadPoolExecutor

    from pyiceberg.exceptions import CommitFailedException

    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}]}
    probe_json(env, "create-namespace", "conc")
    probe_json(env, "create-table", "conc.t", json.dumps(schema))
    processes, commits = 4, 3

    def lakesync_writer(w: int) -> int:
        conflicts = 0
        for c in range(commits):
            while True:
                result = probe(env, "commit-property", "conc.t", f"ls-{w}-{c}", "x", check=False)
                if result.returncode == 0:
                    break
                assert "commit conflict" in result.stderr, result.stderr
                conflicts += 1
        return conflicts

    def pyiceberg_writer() -> int:
        cat = pyiceberg(env)
        conflicts = 0
        for c in range(commits):
            while True:
                try:
                    cat.load_table("conc.t").transaction().set_properties({f"py-{c}": "x"}).commit_transaction()
                    break
                except CommitFailedException:
                    conflicts += 1
        return conflicts

    with ThreadPoolExecutor(max_workers=processes + 1) as pool:
        futures = [pool.submit(lakesync_writer, w) for w in range(processes)] + [pool.submit(pyiceberg_writer)]
        for f in futures:
            f.result()

    expected = {f"ls-{w}-{c}" for w in range(processes) for c in range(commits)} | {f"py-{c}" for c in range(commits)}
    final = probe_json(env, "load-table", "conc.t")
    assert expected <= set(final["metadata"]["properties"])
    # One metadata-log entry per successful commit: nothing lost, nothing doubled.
    assert len(final["metadata"]["metadata-log"]) == len(expected)
    assert pyiceberg(env).load_table("conc.t").metadata_location == final["metadata_location"]
