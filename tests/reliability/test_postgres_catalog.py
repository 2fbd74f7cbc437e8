"""The SQL catalog on PostgreSQL, shared with pyiceberg's SqlCatalog, and four writers at once.

The server is the one scripts/test.sh starts (LAKESYNC_TEST_POSTGRES) or one tests/conftest.py starts;
each test gets a database of its own (the postgres_db fixture). pyiceberg opens the same database
through SQLAlchemy and psycopg2 and must see exactly what lakesync wrote, and the other way round.
"""

from __future__ import annotations

import concurrent.futures
import decimal
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("psycopg2")

COLUMNS = [
    {"name": "id", "type": "long", "required": True},
    {"name": "region", "type": "string", "required": False},
    {"name": "amount", "type": "decimal(12, 2)", "required": False},
]
D = decimal.Decimal


def catalog_file(tmp_path: Path, uri: str, name: str = "shared") -> Path:
    return O.write_yaml(tmp_path / "catalog.yaml", {
        "catalog_name": name,
        "catalog_properties": {"type": "sql", "uri": uri, "warehouse": f"file://{tmp_path / 'wh'}"}})


def pyiceberg_catalog(uri: str, tmp_path: Path, name: str = "shared"):
    pytest.importorskip("pyiceberg")
    from pyiceberg.catalog import load_catalog

    sqlalchemy_uri = uri.replace("postgresql://", "postgresql+psycopg2://", 1)
    return load_catalog(name, type="sql", uri=sqlalchemy_uri, warehouse=f"file://{tmp_path / 'wh'}")


def rows_file(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_lakesync_and_pyiceberg_share_a_postgres_catalog(postgres_db, tmp_path):
    cli = O.Cli(tmp_path, catalog_config=catalog_file(tmp_path, postgres_db))
    cli.ok("namespace", "create", "shop")
    schema = O.schema_file(tmp_path / "schema.yaml", COLUMNS, ["id"])
    cli.ok("table", "create", "shop.orders", "--schema", schema, "--partition", "region", "--format-version", "3")
    cli.ok("table", "append", "shop.orders", rows_file(tmp_path / "a.jsonl", [
        {"id": i, "region": ["eu", "us"][i % 2], "amount": f"{i}.10"} for i in range(100)]))
    cli.ok("table", "delete", "shop.orders", "--where", "id < 10")
    ours = sorted(cli.scan_jsonl("shop.orders"), key=lambda r: r["id"])
    assert [r["id"] for r in ours] == list(range(10, 100))

    # pyiceberg reads lakesync's table (deletion vectors included) from the same database...
    catalog = pyiceberg_catalog(postgres_db, tmp_path)
    assert ("shop",) in catalog.list_namespaces()
    theirs = catalog.load_table("shop.orders").scan().to_arrow().sort_by("id").to_pylist()
    assert [(r["id"], r["region"], r["amount"]) for r in theirs] == [
        (r["id"], r["region"], D(r["amount"])) for r in ours]

    # ...and lakesync reads and writes a table pyiceberg created there.
    arrow_schema = pa.schema([pa.field("k", pa.int64(), nullable=False), pa.field("v", pa.string())])
    created = catalog.create_table("shop.made_by_pyiceberg", schema=arrow_schema)
    created.append(pa.table({"k": [1, 2, 3], "v": ["a", "b", "c"]}, schema=arrow_schema))
    cli.ok("table", "append", "shop.made_by_pyiceberg", rows_file(tmp_path / "b.jsonl", [{"k": 4, "v": "d"}]))
    assert sorted(r["k"] for r in cli.scan_jsonl("shop.made_by_pyiceberg")) == [1, 2, 3, 4]
    again = catalog.load_table("shop.made_by_pyiceberg").scan().to_arrow()
    assert sorted(again.column("k").to_pylist()) == [1, 2, 3, 4]

    # The rows are the ones Java's JdbcCatalog would read: one per table, with iceberg_type TABLE.
    import psycopg2

    con = psycopg2.connect(postgres_db)
    cur = con.cursor()
    cur.execute("SELECT table_namespace, table_name, iceberg_type FROM iceberg_tables ORDER BY table_name")
    assert cur.fetchall() == [("shop", "made_by_pyiceberg", "TABLE"), ("shop", "orders", "TABLE")]
    con.close()


def test_jdbc_uri_and_jdbc_user_properties(postgres_db, tmp_path):
    """Java's spelling: jdbc:postgresql://host:port/db with the user in jdbc.user."""
    rest = postgres_db.split("://", 1)[1]          # lakesync@127.0.0.1:PORT/db
    user, hostpart = rest.split("@", 1)
    config = O.write_yaml(tmp_path / "jdbc.yaml", {
        "catalog_name": "shared",
        "catalog_properties": {"type": "jdbc", "uri": f"jdbc:postgresql://{hostpart}", "jdbc.user": user,
                               "warehouse": f"file://{tmp_path / 'wh'}"}})
    cli = O.Cli(tmp_path, catalog_config=config)
    cli.ok("namespace", "create", "j")
    assert "j" in cli.ok("namespace", "list")


def test_unreachable_server_is_a_clean_error(tmp_path):
    config = catalog_file(tmp_path, f"postgresql://nobody:s3cret@127.0.0.1:{O.free_port()}/db")
    cli = O.Cli(tmp_path, catalog_config=config)
    rc, stderr = cli.fail("namespace", "list")
    assert rc == O.EXIT_FAILURE, stderr
    assert "127.0.0.1" in stderr and "s3cret" not in stderr, stderr


def change_batch(path: Path, writer: int, batch: int, keys: int) -> Path:
    """Writer w's batch b: inserts of its own new keys, updates and deletes of keys shared by all."""
    rows = []
    for i in range(keys):
        rows.append({"id": writer * 1_000_000 + batch * 1000 + i, "region": ["eu", "us", "ap"][i % 3],
                     "amount": D(f"{writer}.{batch:02d}"), "op": "INSERT", "seq": batch})
    schema = pa.schema([("id", pa.int64()), ("region", pa.string()), ("amount", pa.decimal128(12, 2)),
                        ("op", pa.string()), ("seq", pa.int64())])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def test_four_processes_apply_to_one_table_concurrently(postgres_db, tmp_path):
    """Two machines' worth of writers: four `lakesync apply` processes commit to one table through the
    PostgreSQL catalog at once. Nothing is lost or duplicated, and the conflicts really happened."""
    config = catalog_file(tmp_path, postgres_db)
    cli = O.Cli(tmp_path, catalog_config=config)
    cli.ok("namespace", "create", "db")
    schema = O.schema_file(tmp_path / "schema.yaml", COLUMNS, ["id"])
    cli.ok("table", "create", "db.t", "--schema", schema, "--partition", "region", "--format-version", "3",
           "-p", "commit.retry.num-retries=20", "-p", "commit.retry.min-wait-ms=10",
           "-p", "commit.retry.max-wait-ms=500")
    writers, batches, keys = 4, 6, 50

    def writer(w: int) -> list[dict]:
        results = []
        for b in range(batches):
            path = change_batch(tmp_path / f"w{w}-b{b}.parquet", w, b, keys)
            done = cli.run("apply", "--table", "db.t", "--changes", path, "--change-type-column", "op",
                           "--sequence-number-column", "seq", "--equality-columns", "id", "--json",
                           "--log-level", "info")
            assert done.returncode == 0, done.stderr
            results.append({"result": json.loads(done.stdout.splitlines()[-1]),
                            "conflicts": done.stderr.count("conflicted")})
        return results

    with concurrent.futures.ThreadPoolExecutor(writers) as pool:
        outcomes = [r for rs in pool.map(writer, range(writers)) for r in rs]
    ids = sorted(r["id"] for r in cli.scan_jsonl("db.t"))
    expected = sorted(w * 1_000_000 + b * 1000 + i for w in range(writers) for b in range(batches) for i in range(keys))
    assert ids == expected, f"{len(ids)} rows, expected {len(expected)}"
    history = cli.history("db.t")
    assert len(history) == writers * batches
    conflicts = sum(o["conflicts"] for o in outcomes)
    attempts = [t.get("commit_attempts", 1) for o in outcomes for t in o["result"].get("tables", [])]
    print(f"\nfour writers: {writers * batches} commits, {conflicts} conflicts retried, "
          f"at most {max(attempts)} key-resolution round(s) per apply")
    assert conflicts > 0, "the writers never raced: the test proved nothing"
