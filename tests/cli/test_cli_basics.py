"""The everyday commands of the real `lakesync` binary, each test on its own embedded catalog.

Namespaces (checked with pyiceberg's SqlCatalog over the same file), `table create --schema-from`
a Parquet file (types derived as the Iceberg spec maps Arrow/Parquet types), `table describe`
(text, and --json against the metadata file the catalog points at), `table history` (--json:
our snapshots in commit order), the four scan output formats agreeing with each other, time travel
by --as-of, and `table drop` with and without --purge.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def test_namespaces(tmp_path):
    cli = O.Cli(tmp_path)
    cli.ok("namespace", "create", "sales", "-p", "owner=ana", "-p", "note=a=b")
    cli.ok("namespace", "create", "sales.eu")
    cli.ok("namespace", "create", "hr")
    assert cli.ok("namespace", "list").split() == ["hr", "sales"]
    assert json.loads(cli.ok("namespace", "list", "--json")) == ["hr", "sales"]
    assert json.loads(cli.ok("namespace", "list", "sales", "--json")) == ["sales.eu"]

    catalog = O.sql_catalog(cli)
    assert sorted(catalog.list_namespaces()) == [("hr",), ("sales",)]
    assert sorted(catalog.list_namespaces("sales")) == [("sales", "eu")]
    props = catalog.load_namespace_properties("sales")
    assert props.get("owner") == "ana" and props.get("note") == "a=b", props

    # Idempotent forms succeed; the plain forms fail.
    cli.ok("namespace", "create", "hr", "--if-not-exists")
    assert cli.run("namespace", "create", "hr").returncode != 0
    cli.ok("namespace", "drop", "hr")
    cli.ok("namespace", "drop", "hr", "--if-exists")
    assert cli.run("namespace", "drop", "hr").returncode == O.EXIT_NOT_FOUND
    assert json.loads(cli.ok("namespace", "list", "--json")) == ["sales"]
    assert sorted(O.sql_catalog(cli).list_namespaces()) == [("sales",)]

    # pyiceberg's namespaces are lakesync's too.
    catalog.create_namespace("made_by_pyiceberg")
    assert "made_by_pyiceberg" in json.loads(cli.ok("namespace", "list", "--json"))


def _arrow_sample():
    schema = pa.schema([
        pa.field("id", pa.int64(), nullable=False),
        pa.field("n", pa.int32()),
        pa.field("flag", pa.bool_()),
        pa.field("f", pa.float32()),
        pa.field("x", pa.float64()),
        pa.field("amount", pa.decimal128(12, 3)),
        pa.field("day", pa.date32()),
        pa.field("at", pa.timestamp("us")),
        pa.field("at_utc", pa.timestamp("us", tz="UTC")),
        pa.field("name", pa.string(), nullable=False),
        pa.field("blob", pa.binary()),
        pa.field("tags", pa.list_(pa.field("element", pa.string()))),
        pa.field("point", pa.struct([pa.field("x", pa.float64()), pa.field("y", pa.float64())])),
        pa.field("attrs", pa.map_(pa.string(), pa.int64())),
    ])
    rows = [
        {"id": 1, "n": 7, "flag": True, "f": 1.5, "x": -2.25, "amount": decimal.Decimal("12.345"),
         "day": dt.date(2024, 2, 29), "at": dt.datetime(2024, 2, 29, 12, 0, 1, 500),
         "at_utc": dt.datetime(2001, 1, 1, tzinfo=dt.timezone.utc), "name": "ä", "blob": b"\x00\x01",
         "tags": ["a", None], "point": {"x": 1.0, "y": None}, "attrs": [("k", 1)]},
        {"id": 2, "n": None, "flag": None, "f": None, "x": None, "amount": None, "day": None, "at": None,
         "at_utc": None, "name": "", "blob": None, "tags": None, "point": None, "attrs": None},
    ]
    return pa.Table.from_pylist(rows, schema=schema)


EXPECTED_TYPES = {"id": "long", "n": "int", "flag": "boolean", "f": "float", "x": "double",
                  "amount": "decimal(12, 3)", "day": "date", "at": "timestamp", "at_utc": "timestamptz",
                  "name": "string", "blob": "binary"}


def test_create_from_a_parquet_file_describe_and_history(tmp_path):
    cli = O.Cli(tmp_path)
    cli.ok("namespace", "create", "db")
    sample = tmp_path / "sample.parquet"
    pq.write_table(_arrow_sample(), sample)
    out = cli.ok("table", "create", "db.t", "--schema-from", sample, "--partition", "day(at)",
                 "--sort", "id desc", "-p", "owner=ana")
    assert "db.t" in out

    metadata = cli.metadata("db.t")
    [(location,)] = [(r[3],) for r in O.catalog_rows(cli.catalog_db) if r[2] == "t"]
    assert metadata == json.loads(Path(O.local_path(location)).read_text()), \
        "describe --json is the metadata file the catalog points at"
    assert metadata["format-version"] == 2
    fields = {f["name"]: f for f in metadata["schemas"][0]["fields"]}
    assert list(fields) == _arrow_sample().schema.names
    for name, want in EXPECTED_TYPES.items():
        assert fields[name]["type"] == want, (name, fields[name])
    assert fields["id"]["required"] and fields["name"]["required"] and not fields["n"]["required"]
    assert fields["tags"]["type"]["type"] == "list" and fields["tags"]["type"]["element"] == "string"
    assert [f["name"] for f in fields["point"]["type"]["fields"]] == ["x", "y"]
    assert fields["attrs"]["type"]["key"] == "string" and fields["attrs"]["type"]["value"] == "long"
    ids = [f["id"] for f in metadata["schemas"][0]["fields"]]
    assert len(set(ids)) == len(ids) and metadata["last-column-id"] >= max(ids)
    [spec] = metadata["partition-specs"]
    assert [(f["transform"], f["source-id"]) for f in spec["fields"]] == [("day", fields["at"]["id"])]
    [order] = [o for o in metadata["sort-orders"] if o["order-id"] == metadata["default-sort-order-id"]]
    assert [(f["direction"], f["null-order"], f["source-id"]) for f in order["fields"]] == \
        [("desc", "nulls-last", fields["id"]["id"])]
    assert metadata["properties"].get("owner") == "ana"
    assert "current-snapshot-id" not in metadata or metadata["current-snapshot-id"] in (None, -1)

    # pyiceberg sees the same schema.
    table = O.sql_catalog(cli).load_table("db.t")
    assert [f.name for f in table.schema().fields] == list(fields)

    # Two appends and a delete, then describe and history.
    cli.ok("table", "append", "db.t", sample)
    cli.ok("table", "append", "db.t", sample)
    cli.ok("table", "delete", "db.t", "--where", "id = 2")
    text = cli.ok("table", "describe", "db.t")
    metadata = cli.metadata("db.t")
    for needle in ("db.t", "Format version   2", metadata["location"], metadata["table-uuid"],
                   str(metadata["current-snapshot-id"]), "1: id: required long", "day(at)", "owner = ana",
                   "Records          4"):
        assert needle in text, f"describe does not show {needle!r}:\n{text}"

    history = cli.history("db.t")
    assert [h["snapshot-id"] for h in history] == [s["snapshot-id"] for s in metadata["snapshots"]]
    assert [h["summary"]["operation"] for h in history] == ["append", "append", "delete"]
    assert [h["sequence-number"] for h in history] == [1, 2, 3]
    assert [h.get("parent-snapshot-id") for h in history] == [None] + [h["snapshot-id"] for h in history[:-1]]
    assert [h["is-current"] for h in history] == [False, False, True]
    assert history[-1]["snapshot-id"] == metadata["current-snapshot-id"]
    pyiceberg_ids = [s.snapshot_id for s in O.sql_catalog(cli).load_table("db.t").metadata.snapshots]
    assert [h["snapshot-id"] for h in history] == pyiceberg_ids
    lines = cli.ok("table", "history", "db.t").splitlines()
    assert len(lines) == 4 and lines[-1].endswith("(current)")
    assert [line.split()[0] for line in lines[1:]] == [str(h["snapshot-id"]) for h in history]

    # The rows: the sample twice, minus id 2.
    columns = metadata["schemas"][-1]["fields"]
    want = O.arrow_rows(_arrow_sample(), columns) * 2
    want = [r for r in want if r[0] != 2]
    O.assert_same_rows(O.normalise_rows(cli.scan_jsonl("db.t"), columns, "jsonl"), want, "scan")


def _scan_table_fixture(tmp_path):
    cli = O.Cli(tmp_path)
    cli.ok("namespace", "create", "db")
    columns = [{"name": "id", "type": "long", "required": True}, {"name": "s", "type": "string", "required": False},
               {"name": "amount", "type": "decimal(9, 2)", "required": False},
               {"name": "d", "type": "date", "required": False}, {"name": "ts", "type": "timestamp", "required": False},
               {"name": "flag", "type": "boolean", "required": False},
               {"name": "x", "type": "double", "required": False},
               {"name": "tags", "type": {"type": "list", "element": "int", "element-required": False},
                "required": False}]
    rows = [(i, None if i % 5 == 0 else f"s{i}, \"q\"" if i % 7 == 0 else f"s{i}",
             None if i % 4 == 0 else decimal.Decimal(i * 37 - 500).scaleb(-2),
             dt.date(2020, 1, 1) + dt.timedelta(days=i * 13), None if i % 6 == 0 else i * 3_600_000_123,
             None if i % 3 == 0 else i % 2 == 0, i / 8 if i % 9 else None, tuple(range(i % 3)) if i % 4 else None)
            for i in range(40)]
    cli.ok("table", "create", "db.t", "--schema", O.schema_file(tmp_path / "s.yaml", columns))
    cli.ok("table", "append", "db.t", O.write_parquet(tmp_path / "in.parquet", rows, columns))
    return cli, columns, rows


def test_scan_formats_agree(tmp_path):
    cli, columns, rows = _scan_table_fixture(tmp_path)
    want = O.normalise_rows(rows, columns, "python")
    jsonl_raw = cli.scan_jsonl("db.t")
    O.assert_same_rows(O.normalise_rows(jsonl_raw, columns, "jsonl"), want, "jsonl")

    # Parquet, to a file and to standard output redirected to a file.
    out = tmp_path / "out.parquet"
    cli.ok("scan", "--table", "db.t", "--format", "parquet", "--output", out)
    O.assert_same_rows(O.arrow_rows(pq.read_table(out), columns), want, "--format parquet --output")
    redirected = tmp_path / "redirected.parquet"
    with open(redirected, "wb") as f:
        done = subprocess.run([str(O.LAKESYNC), "scan", "--table", "db.t", "--format", "parquet"], stdout=f,
                              stderr=subprocess.PIPE, env=cli.env, cwd=cli.workdir, timeout=60)
    assert done.returncode == 0, done.stderr
    O.assert_same_rows(O.arrow_rows(pq.read_table(redirected), columns), want, "parquet on redirected stdout")

    # CSV: the JSON Lines values without JSON quoting, null as an empty field, nested values as JSON.
    text = cli.ok("scan", "--table", "db.t", "--format", "csv")
    reader = list(csv.reader(io.StringIO(text)))
    assert reader[0] == [c["name"] for c in columns]

    def as_csv(value):
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (list, dict)):
            return json.dumps(value, separators=(",", ":"))
        return str(value)

    want_csv = sorted([as_csv(r[c["name"]]) for c in columns] for r in jsonl_raw)
    assert sorted(reader[1:]) == want_csv

    # The aligned table: same cells, "null" for nulls, a row count at the end.
    text = cli.ok("scan", "--table", "db.t", "--format", "table")
    lines = text.rstrip("\n").splitlines()
    assert [h.strip() for h in lines[0].split(" | ")] == [c["name"] for c in columns]
    assert set(lines[1]) <= {"-", "+"}
    assert lines[-1] == f"({len(rows)} rows)"
    cells = sorted([cell.strip() for cell in line.split(" | ")] for line in lines[2:-1])
    want_cells = sorted([("null" if r[c["name"]] is None else as_csv(r[c["name"]])) for c in columns]
                        for r in jsonl_raw)
    # Strings with " | " inside would make this ambiguous; the fixture has none.
    assert cells == want_cells

    # --stats reports on standard error.
    done = cli.run("scan", "--table", "db.t", "--format", "jsonl", "--stats")
    assert done.returncode == 0 and f"{len(rows)} rows" in done.stderr, done.stderr


def test_scan_parquet_into_a_pipe(tmp_path):
    cli, columns, rows = _scan_table_fixture(tmp_path)
    done = subprocess.run([str(O.LAKESYNC), "scan", "--table", "db.t", "--format", "parquet"], capture_output=True,
                          env=cli.env, cwd=cli.workdir, timeout=60)
    assert done.returncode == 0, done.stderr
    O.assert_same_rows(O.arrow_rows(pq.read_table(io.BytesIO(done.stdout)), columns),
                       O.normalise_rows(rows, columns, "python"), "parquet through a pipe")


def test_scan_parquet_to_a_device_and_a_named_pipe(tmp_path):
    # --output names a file that is not a regular one: /dev/null (a benchmark's sink) and a FIFO read by
    # another process. Written files are synced at close; these have nothing to sync and must not fail.
    cli, columns, rows = _scan_table_fixture(tmp_path)
    done = cli.run("scan", "--table", "db.t", "--format", "parquet", "--output", "/dev/null")
    assert done.returncode == 0, done.stderr
    fifo = tmp_path / "rows.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    done = cli.run("scan", "--table", "db.t", "--format", "parquet", "--output", str(fifo))
    data, _ = reader.communicate(timeout=60)
    assert done.returncode == 0, done.stderr
    O.assert_same_rows(O.arrow_rows(pq.read_table(io.BytesIO(data)), columns),
                       O.normalise_rows(rows, columns, "python"), "parquet through a named pipe")


def test_parquet_output_codec_is_chosen_with_compression(tmp_path):
    cli, columns, rows = _scan_table_fixture(tmp_path)
    for flag, codec in ((None, "ZSTD"), ("snappy", "SNAPPY"), ("UNCOMPRESSED", "UNCOMPRESSED"), ("gzip", "GZIP")):
        out = tmp_path / f"rows-{flag}.parquet"
        extra = ["--compression", flag] if flag else []
        cli.ok("scan", "--table", "db.t", "--format", "parquet", "--output", str(out), *extra)
        meta = pq.ParquetFile(out).metadata
        got = {meta.row_group(g).column(c).compression for g in range(meta.num_row_groups)
               for c in range(meta.num_columns)}
        assert got == {codec}, (flag, got)
        O.assert_same_rows(O.arrow_rows(pq.read_table(out), columns), O.normalise_rows(rows, columns, "python"),
                           f"parquet with --compression {flag}")
    bad = cli.run("scan", "--table", "db.t", "--format", "parquet", "--output", str(tmp_path / "x.parquet"),
                  "--compression", "lzma")
    assert bad.returncode != 0 and "--compression" in bad.stderr and "'lzma'" in bad.stderr, bad.stderr
    assert not (tmp_path / "x.parquet").exists(), "refused before anything was written"
    wrong_format = cli.run("scan", "--table", "db.t", "--format", "jsonl", "--compression", "snappy")
    assert wrong_format.returncode != 0 and "--compression applies to --format parquet" in wrong_format.stderr, \
        wrong_format.stderr


def test_time_travel_by_timestamp(tmp_path):
    cli, columns, rows = _scan_table_fixture(tmp_path)
    import time

    time.sleep(0.05)
    cli.ok("table", "delete", "db.t", "--where", "id < 10")
    history = cli.history("db.t")
    assert len(history) == 2
    first_ms, second_ms = history[0]["timestamp-ms"], history[1]["timestamp-ms"]
    assert second_ms > first_ms

    def iso(ms: int) -> str:
        return (O.EPOCH + dt.timedelta(milliseconds=ms)).isoformat(timespec="milliseconds")

    for at, want_rows in ((first_ms, rows), (second_ms - 1 if second_ms - 1 > first_ms else first_ms, rows),
                          (second_ms, [r for r in rows if r[0] >= 10])):
        got = O.normalise_rows(cli.scan_jsonl("db.t", "--as-of", iso(at)), columns, "jsonl")
        O.assert_same_rows(got, O.normalise_rows(want_rows, columns, "python"), f"--as-of {iso(at)}")
    assert cli.run("scan", "--table", "db.t", "--as-of", iso(first_ms - 1000)).returncode != 0, \
        "nothing existed before the first commit"


def test_drop_and_purge(tmp_path):
    cli, _, _ = _scan_table_fixture(tmp_path)
    cli.ok("table", "delete", "db.t", "--where", "id = 1")
    table_dir = cli.warehouse / "db" / "t"
    files = O.list_files(table_dir)
    assert any(f.startswith("data/") for f in files) and any(f.startswith("metadata/") for f in files)

    # Without --purge: the catalog entry goes, the files stay.
    cli.ok("table", "drop", "db.t")
    assert [r for r in O.catalog_rows(cli.catalog_db) if r[2] == "t"] == []
    assert O.list_files(table_dir) == files
    assert not O.sql_catalog(cli).table_exists("db.t")
    assert cli.run("scan", "--table", "db.t").returncode == O.EXIT_NOT_FOUND
    cli.ok("table", "drop", "db.t", "--if-exists")

    # With --purge: every file of the table goes too, other tables are untouched.
    (tmp_path / "again").mkdir()
    cli2, _, _ = _scan_table_fixture(tmp_path / "again")
    other = O.schema_file(tmp_path / "again" / "o.yaml", [{"name": "id", "type": "long", "required": False}])
    cli2.ok("table", "create", "db.keep", "--schema", other)
    (tmp_path / "again" / "k.jsonl").write_text('{"id": 1}\n')
    cli2.ok("table", "append", "db.keep", tmp_path / "again" / "k.jsonl")
    keep = O.list_files(cli2.warehouse / "db" / "keep")
    cli2.ok("table", "delete", "db.t", "--where", "id = 1")
    assert O.list_files(cli2.warehouse / "db" / "t")
    cli2.ok("table", "drop", "db.t", "--purge")
    assert O.list_files(cli2.warehouse / "db" / "t") == []
    assert O.list_files(cli2.warehouse / "db" / "keep") == keep
    assert [r for r in O.catalog_rows(cli2.catalog_db) if r[2] == "t"] == []
    assert cli2.run("table", "drop", "db.t").returncode == O.EXIT_NOT_FOUND
