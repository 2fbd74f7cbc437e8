"""Bad input to the real `lakesync` binary: a clear error, the documented exit code, and no change.

docs/cli.md: errors go to standard error as `lakesync: error: <message>` naming the file, key,
version or row involved; exit codes 2 (invalid input), 3 (not found), 4 (corrupt data); "a command
that fails changes nothing: files it wrote are deleted and no snapshot is committed". So every case
records the catalog rows and every file under the warehouse (with its content hash) before the
command and compares them after.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync

COLUMNS = [{"name": "id", "type": "long", "required": True}, {"name": "s", "type": "string", "required": False},
           {"name": "d", "type": "date", "required": False}, {"name": "n", "type": "int", "required": False}]
ROWS = [(1, "a", "2024-01-01", 10), (2, "b", None, None), (3, None, "1999-12-31", -4)]


def state(cli: O.Cli) -> dict:
    """Catalog rows and every file under the warehouse, with a hash of its bytes."""
    files = {}
    for rel in O.list_files(cli.warehouse):
        if rel.startswith("catalog.db"):
            continue
        files[rel] = hashlib.sha256((cli.warehouse / rel).read_bytes()).hexdigest()
    import sqlite3

    con = sqlite3.connect(f"file:{cli.catalog_db}?mode=ro", uri=True)
    try:
        tables = sorted(con.execute("SELECT * FROM iceberg_tables").fetchall())
        namespaces = sorted(con.execute("SELECT * FROM iceberg_namespace_properties").fetchall())
    finally:
        con.close()
    return {"tables": tables, "namespaces": namespaces, "files": files}


def assert_unchanged(before: dict, after: dict) -> None:
    assert after["tables"] == before["tables"], "the catalog's table rows changed"
    assert after["namespaces"] == before["namespaces"], "the catalog's namespaces changed"
    added = sorted(set(after["files"]) - set(before["files"]))
    removed = sorted(set(before["files"]) - set(after["files"]))
    changed = sorted(k for k in set(before["files"]) & set(after["files"]) if before["files"][k] != after["files"][k])
    assert not (added or removed or changed), f"files added {added}, removed {removed}, changed {changed}"


def error_line(stderr: str, prefixed: bool = True) -> str:
    """The `lakesync: error: ...` line. With prefixed=False, flag-parsing errors (printed by CLI11
    without the prefix, see test_flag_errors_use_the_documented_prefix) are accepted too."""
    lines = [line for line in stderr.splitlines() if line.startswith("lakesync: error: ")]
    if not lines and not prefixed and stderr.strip():
        return stderr.strip().splitlines()[0]
    assert lines, f"no 'lakesync: error:' line in stderr: {stderr!r}"
    return lines[-1]


def expect_failure(cli: O.Cli, args: list, code, *needles: str, prefixed: bool = True) -> str:
    """Runs a failing command; checks the exit code (an int or a set), that nothing changed and that
    the error line names every needle. Returns the error line."""
    before = state(cli)
    rc, stderr = cli.fail(*args)
    codes = code if isinstance(code, (set, tuple)) else {code}
    assert rc in codes, f"exit code {rc}, expected {codes}; stderr: {stderr}"
    line = error_line(stderr, prefixed)
    for needle in needles:
        assert str(needle) in line, f"error does not name {needle!r}: {line}"
    assert_unchanged(before, state(cli))
    return line


@pytest.fixture
def table(tmp_path) -> O.Cli:
    """db.t: v2, partitioned by n, two appends and a delete."""
    cli = O.Cli(tmp_path)
    cli.ok("namespace", "create", "db")
    schema = O.schema_file(tmp_path / "schema.yaml", COLUMNS)
    cli.ok("table", "create", "db.t", "--schema", schema, "--partition", "truncate(n, 10)")
    for k, row in enumerate(ROWS):
        path = tmp_path / f"in{k}.jsonl"
        path.write_text(json.dumps(dict(zip([c["name"] for c in COLUMNS], row))) + "\n")
    cli.ok("table", "append", "db.t", tmp_path / "in0.jsonl", tmp_path / "in1.jsonl")
    cli.ok("table", "append", "db.t", tmp_path / "in2.jsonl")
    cli.ok("table", "delete", "db.t", "--where", "id = 2")
    return cli


def current_metadata(cli: O.Cli) -> Path:
    [(location,)] = [(row[3],) for row in O.catalog_rows(cli.catalog_db) if row[2] == "t"]
    return Path(O.local_path(location))


def table_files(cli: O.Cli, suffix: str) -> list[Path]:
    return sorted((cli.warehouse / "db" / "t").rglob(f"*{suffix}"))


def live_data_files(cli: O.Cli) -> list[Path]:
    entries = O.manifest_entries(cli.metadata("db.t"))
    return [Path(O.local_path(e["data_file"]["file_path"])) for e in entries if e["data_file"]["content"] == 0]


# ---------------------------------------------------------------------------------------------
# Damaged tables


READ_COMMANDS = [["scan", "--table", "db.t"], ["table", "describe", "db.t"], ["table", "history", "db.t"]]


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_unreadable_metadata_json_is_corrupt(table, damage):
    path = current_metadata(table)
    text = path.read_text()
    path.write_text("{\"format-version\": 2, \"table-uuid\": " if damage == "garbage" else text[: len(text) // 2])
    for args in READ_COMMANDS + [["table", "append", "db.t", table.workdir / "in0.jsonl"],
                                 ["table", "delete", "db.t", "--where", "id = 1"]]:
        expect_failure(table, args, O.EXIT_CORRUPT, path.name)


def test_metadata_with_format_version_4(table):
    path = current_metadata(table)
    doc = json.loads(path.read_text())
    doc["format-version"] = 4
    path.write_text(json.dumps(doc))
    for args in READ_COMMANDS:
        # docs/cli.md gives no code for "unsupported"; lakesync maps it to 1 ("anything unexpected").
        # Either that or 4 (corrupt) is defensible; 0, 2 and 3 are not.
        line = expect_failure(table, args, {O.EXIT_FAILURE, O.EXIT_CORRUPT}, path.name, "format-version 4")
        assert "not supported" in line or "unsupported" in line.lower()


def test_metadata_with_an_unknown_type(table):
    path = current_metadata(table)
    doc = json.loads(path.read_text())
    for schema in doc["schemas"]:
        for field in schema["fields"]:
            if field["name"] == "d":
                field["type"] = "varchar"
    path.write_text(json.dumps(doc))
    for args in READ_COMMANDS:
        expect_failure(table, args, {O.EXIT_FAILURE, O.EXIT_CORRUPT}, path.name, "'varchar'", "'d'")


def test_missing_manifest_is_not_found(table):
    manifests = [p for p in table_files(table, ".avro") if not p.name.startswith("snap-")]
    live = {O.local_path(m["manifest_path"]) for m in O.read_avro_records(table.current_snapshot("db.t")["manifest-list"])}
    victim = next(p for p in manifests if str(p) in live)
    victim.unlink()
    expect_failure(table, ["scan", "--table", "db.t"], O.EXIT_NOT_FOUND, victim.name)
    expect_failure(table, ["table", "delete", "db.t", "--where", "id > 0"], O.EXIT_NOT_FOUND, victim.name)


def test_missing_manifest_list_is_not_found(table):
    path = Path(O.local_path(table.current_snapshot("db.t")["manifest-list"]))
    path.unlink()
    expect_failure(table, ["scan", "--table", "db.t"], O.EXIT_NOT_FOUND, path.name)


def test_missing_data_file_is_not_found(table):
    victim = live_data_files(table)[0]
    victim.unlink()
    expect_failure(table, ["scan", "--table", "db.t"], O.EXIT_NOT_FOUND, victim.name)
    expect_failure(table, ["table", "delete", "db.t", "--where", "id > 0"], O.EXIT_NOT_FOUND, victim.name)


@pytest.mark.parametrize("cut", ["footer", "header"])
def test_truncated_parquet_data_file_is_corrupt(table, cut):
    victim = live_data_files(table)[0]
    data = victim.read_bytes()
    victim.write_bytes(data[:-9] if cut == "footer" else data[:100])
    expect_failure(table, ["scan", "--table", "db.t"], O.EXIT_CORRUPT, victim.name)


def test_garbage_manifest_is_corrupt(table):
    live = [O.local_path(m["manifest_path"]) for m in O.read_avro_records(table.current_snapshot("db.t")["manifest-list"])]
    victim = Path(live[0])
    victim.write_bytes(b"Obj\x01" + b"\x00" * 64)
    expect_failure(table, ["scan", "--table", "db.t"], O.EXIT_CORRUPT, victim.name)


# ---------------------------------------------------------------------------------------------
# Bad flags


@pytest.mark.parametrize("text, needles", [
    ("id = = 3", ["position 6", "'='"]),
    ("s = 'abc", ["position 5", "unterminated"]),
    ("id > 1 AND AND s = 'a'", ["position", "AND"]),
    ("id IN (1, 2", ["id IN (1, 2"]),
])
def test_malformed_filter(table, text, needles):
    for flag, args in (("--filter", ["scan", "--table", "db.t"]), ("--where", ["table", "delete", "db.t"])):
        expect_failure(table, args + [flag, text], O.EXIT_INVALID, *needles)


def test_unknown_columns_in_filter_and_select(table):
    expect_failure(table, ["scan", "--table", "db.t", "--filter", "nope = 1"], O.EXIT_INVALID, "'nope'")
    expect_failure(table, ["scan", "--table", "db.t", "--select", "id,nope"], O.EXIT_INVALID, "'nope'")
    expect_failure(table, ["table", "delete", "db.t", "--where", "s.x = 1"], O.EXIT_INVALID, "s.x")
    expect_failure(table, ["scan", "--table", "db.t", "--filter", "s > 5"], O.EXIT_INVALID, "s")


def test_unknown_snapshot_id(table):
    ids = table.snapshot_ids("db.t")
    missing = max(ids) + 1
    expect_failure(table, ["scan", "--table", "db.t", "--snapshot-id", missing], O.EXIT_NOT_FOUND, str(missing))


def test_unknown_table_and_namespace(table):
    expect_failure(table, ["scan", "--table", "db.nope"], O.EXIT_NOT_FOUND, "db.nope")
    expect_failure(table, ["table", "append", "db.nope", table.workdir / "in0.jsonl"], O.EXIT_NOT_FOUND, "db.nope")
    schema = table.workdir / "schema.yaml"
    expect_failure(table, ["table", "create", "nons.t", "--schema", schema], O.EXIT_NOT_FOUND, "nons")
    expect_failure(table, ["namespace", "drop", "nons"], O.EXIT_NOT_FOUND, "nons")


MALFORMED_NAME_COMMANDS = [["table", "describe"], ["table", "history"], ["table", "delete", "--where", "id = 1"],
                           ["table", "upgrade", "--format-version", "3"], ["table", "compact"],
                           ["table", "rewrite-manifests"], ["table", "expire-snapshots"], ["table", "remove-orphans"],
                           ["scan", "--table"]]


@pytest.mark.parametrize("command, name", [(c, "a..b") for c in MALFORMED_NAME_COMMANDS]
                         + [(["table", "describe"], ""), (["table", "describe"], "notable")])
def test_malformed_table_name_touches_no_catalog(tmp_path, command, name):
    """The name is checked before the catalog is opened: not even the embedded catalog's file appears."""
    cli = O.Cli(tmp_path)
    rc, stderr = cli.fail(*command, name)
    assert rc == O.EXIT_INVALID, f"exit code {rc}; stderr: {stderr}"
    assert f"'{name}'" in error_line(stderr), error_line(stderr)
    assert not cli.warehouse.exists(), sorted(p.name for p in cli.warehouse.iterdir())


def test_bad_partition_terms(table):
    schema = table.workdir / "schema.yaml"
    for term, needle in (("bucket(nope, 4)", "nope"), ("foo(id)", "foo"), ("bucket(id)", "bucket(id)"),
                         ("truncate(d, 3)", "truncate(d, 3)"), ("year(s)", "year(s)")):
        expect_failure(table, ["table", "create", "db.u", "--schema", schema, "--partition", term], O.EXIT_INVALID,
                       needle)


def test_create_existing_table_and_drop_non_empty_namespace(table):
    schema = table.workdir / "schema.yaml"
    # docs/cli.md does not classify "already exists" / "not empty"; neither is "not found" or
    # "corrupt", and the message must name the object.
    expect_failure(table, ["table", "create", "db.t", "--schema", schema], {O.EXIT_FAILURE, O.EXIT_INVALID},
                   "db.t", "already exists")
    expect_failure(table, ["namespace", "drop", "db"], {O.EXIT_FAILURE, O.EXIT_INVALID}, "'db'", "not empty")
    expect_failure(table, ["namespace", "create", "db"], {O.EXIT_FAILURE, O.EXIT_INVALID}, "'db'")


def test_bad_schema_files(table):
    bad = table.workdir / "bad.yaml"
    cases = [("fields:\n  - {name: id, type: long}\n  - {name: id, type: int}\n", ["bad.yaml", "id"]),
             ("fields: [\n", ["bad.yaml"]),
             ("fields:\n  - {name: id, type: \"decimal(40, 2)\"}\n", ["bad.yaml", "decimal(40, 2)"])]
    for text, needles in cases:
        bad.write_text(text)
        expect_failure(table, ["table", "create", "db.u", "--schema", bad], O.EXIT_INVALID, *needles)
    expect_failure(table, ["table", "create", "db.u", "--schema", table.workdir / "absent.yaml"],
                   {O.EXIT_NOT_FOUND, O.EXIT_INVALID}, "absent.yaml")
    expect_failure(table, ["table", "create", "db.u", "--schema", table.workdir / "schema.yaml",
                           "--format-version", "4"], O.EXIT_INVALID, "format-version")


def test_schema_file_with_an_unknown_type_is_invalid_input(table):
    bad = table.workdir / "bad.yaml"
    bad.write_text("fields:\n  - {name: id, type: lnog}\n")
    expect_failure(table, ["table", "create", "db.u", "--schema", bad], O.EXIT_INVALID, "bad.yaml", "lnog")


# ---------------------------------------------------------------------------------------------
# Appends that must not commit anything


def _write(path: Path, fmt: str, rows: list[dict]) -> Path:
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif fmt == "csv":
        names = list(rows[0])
        path.write_text(",".join(names) + "\n" + "".join(
            ",".join("" if r[n] is None else str(r[n]) for n in names) + "\n" for r in rows))
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


GOOD = [{"id": 10, "s": "x", "d": "2024-02-02", "n": 1}, {"id": 11, "s": "y", "d": None, "n": 2}]
BAD = {  # kind -> (rows, column, row number the error must name, or None)
    "unknown column": ([{"id": 12, "s": "z", "d": None, "n": 3, "colour": "red"}], "colour", None),
    "null in a required column": ([{"id": 13, "s": "z", "d": None, "n": 3},
                                   {"id": None, "s": "z", "d": None, "n": 3}], "id", 2),
    "unparsable value": ([{"id": 14, "s": "z", "d": "2024-01-01", "n": 3},
                          {"id": 15, "s": "z", "d": "2024-13-45", "n": 3}], "d", 2),
}
FORMATS = ["jsonl", "csv", "parquet"]
# Parquet carries types, so a bad date is a wrong type there: an int where an int is expected cannot
# be unparsable. Use a string in the int column instead.
PARQUET_UNPARSABLE = [{"id": 14, "s": "z", "d": "2024-01-01", "n": "3"}, {"id": 15, "s": "z", "d": None, "n": "x"}]


def _bad_rows(kind: str, fmt: str) -> tuple[list[dict], str, int | None]:
    rows, column, row = BAD[kind]
    if fmt == "parquet" and kind == "unparsable value":
        return PARQUET_UNPARSABLE, "n", 2
    return rows, column, row


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", list(BAD))
def test_rejected_append_commits_nothing(table, kind, fmt):
    rows, _, _ = _bad_rows(kind, fmt)
    good = _write(table.workdir / f"good.{fmt}", fmt, GOOD)
    bad = _write(table.workdir / f"bad.{fmt}", fmt, rows)
    snapshots = table.snapshot_ids("db.t")
    data_before = sorted(p.name for p in table_files(table, ".parquet"))
    # The good file comes first, so its rows are written before the bad file fails the append.
    expect_failure(table, ["table", "append", "db.t", good, bad], O.EXIT_INVALID, bad.name)
    assert table.snapshot_ids("db.t") == snapshots, "no new snapshot"
    assert sorted(p.name for p in table_files(table, ".parquet")) == data_before, "no data files left behind"
    got = sorted(r["id"] for r in table.scan_jsonl("db.t"))
    assert got == [1, 3]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", list(BAD))
def test_rejected_append_names_file_row_and_column(table, kind, fmt):
    rows, column, row = _bad_rows(kind, fmt)
    bad = _write(table.workdir / f"bad.{fmt}", fmt, rows)
    rc, stderr = table.fail("table", "append", "db.t", bad)
    line = error_line(stderr)
    assert rc == O.EXIT_INVALID
    assert bad.name in line
    assert f"'{column}'" in line, f"the error does not name column {column!r}: {line}"
    if row is not None:
        assert f"row {row}" in line, f"the error does not name row {row}: {line}"


# ---------------------------------------------------------------------------------------------
# Catalog configuration


@pytest.mark.parametrize("doc, needles", [
    ({"catalog_name": "x", "catalog_properties": {"type": "sql", "uri": "URI", "warehouse": "WH"}, "colour": "blue"},
     ["colour"]),
    ({"catalog_name": "x", "catalog_properties": {"type": "sql", "uri": "URI"}}, ["warehouse"]),
    ({"catalog_name": "x", "catalog_properties": {"type": "sql", "warehouse": "WH"}}, ["uri"]),
    ({"catalog_name": "x", "catalog_properties": {"uri": "URI", "warehouse": "WH"}}, ["type"]),
    ({"catalog_name": "x", "catalog_properties": {"type": "sql", "uri": "URI", "warehouse": "WH",
                                                  "s3.endpoint": ["a", "b"]}}, ["s3.endpoint"]),
    ({"catalog_name": "x", "catalog_properties": {"type": "nosuchtype", "uri": "URI", "warehouse": "WH"}},
     ["nosuchtype"]),
])
def test_bad_catalog_config(tmp_path, doc, needles):
    cli = O.Cli(tmp_path)
    db = tmp_path / "other.db"
    text = json.dumps(doc).replace("URI", f"sqlite:///{db}").replace("WH", f"file://{tmp_path}/wh2")
    config = tmp_path / "catalog.yaml"
    config.write_text(text)  # JSON is YAML
    for args in (["namespace", "list"], ["namespace", "create", "ns"], ["scan", "--table", "ns.t"]):
        done = cli.run(*args, "--catalog-config", config, config=False)
        assert done.returncode == O.EXIT_INVALID, (args, done.returncode, done.stderr)
        line = error_line(done.stderr)
        assert "catalog.yaml" in line, line
        for needle in needles:
            assert needle in line, f"{needle!r} not in {line}"
    assert not db.exists() and not (tmp_path / "wh2").exists(), "a rejected config must not create anything"


def test_malformed_catalog_config_yaml(tmp_path):
    cli = O.Cli(tmp_path)
    config = tmp_path / "broken.yaml"
    config.write_text("catalog_name: x\ncatalog_properties: [\n")
    done = cli.run("namespace", "list", "--catalog-config", config, config=False)
    assert done.returncode == O.EXIT_INVALID
    assert "broken.yaml" in error_line(done.stderr)


# ---------------------------------------------------------------------------------------------
# --help and --version


HELP = {
    (): ["namespace", "table", "scan", "--version", "--log-level"],
    ("namespace", "create"): ["--property", "--if-not-exists", "--catalog-config"],
    ("namespace", "list"): ["--json", "--catalog-config"],
    ("namespace", "drop"): ["--if-exists", "--catalog-config"],
    ("table", "create"): ["--schema", "--schema-from", "--partition", "--sort", "--identifier-fields", "--property",
                          "--format-version", "--location", "--catalog-config"],
    ("table", "describe"): ["--json", "--catalog-config"],
    ("table", "history"): ["--json", "--catalog-config"],
    ("table", "append"): ["--input-format", "--catalog-config"],
    ("table", "delete"): ["--where", "--mode", "--equality-columns", "--catalog-config"],
    ("table", "drop"): ["--purge", "--if-exists", "--catalog-config"],
    ("scan",): ["--table", "--filter", "--select", "--limit", "--snapshot-id", "--as-of", "--ref", "--format",
                "--output", "--stats", "--catalog-config"],
}


@pytest.mark.parametrize("command", list(HELP), ids=lambda c: "-".join(c) or "top")
def test_help_of_every_command(tmp_path, command):
    cli = O.Cli(tmp_path)
    out = cli.ok(*command, "--help", config=False)
    for flag in HELP[command]:
        assert flag in out, f"lakesync {' '.join(command)} --help does not mention {flag}"
    assert not (tmp_path / "wh").exists(), "--help must not create the embedded catalog"


def test_version(tmp_path):
    cli = O.Cli(tmp_path)
    for name in ("ARROW_DEFAULT_MEMORY_POOL", "JE_ARROW_MALLOC_CONF"):  # the defaults, whatever the caller's
        cli.env.pop(name, None)
    out = cli.ok("--version", config=False)
    import re

    assert re.fullmatch(r"lakesync \d+\.\d+\.\d+.*\n", out), out
    # Arrow's memory pool is jemalloc unless the user names another, and its arenas keep freed pages
    # 10 s instead of Arrow's 1 s (tools/lakesync/main.cc says why for both).
    assert out.endswith("; memory pool: jemalloc, freed pages kept 10000 ms)\n"), out
    # The user's own jemalloc configuration is kept.
    configured = O.Cli(tmp_path, env={"ARROW_DEFAULT_MEMORY_POOL": "jemalloc",
                                      "JE_ARROW_MALLOC_CONF": "dirty_decay_ms:2000,muzzy_decay_ms:2000"})
    out = configured.ok("--version", config=False)
    assert out.endswith("; memory pool: jemalloc, freed pages kept 2000 ms)\n"), out
    chosen = O.Cli(tmp_path, env={"ARROW_DEFAULT_MEMORY_POOL": "system"}).ok("--version", config=False)
    assert chosen.endswith("; memory pool: system)\n"), chosen


def test_flag_errors_use_the_documented_prefix(tmp_path):
    cli = O.Cli(tmp_path)
    done = cli.run("table", "create", "db.t", "--schema", "x.yaml", "--format-version", "4", config=False)
    assert done.returncode == O.EXIT_INVALID
    assert "format-version" in error_line(done.stderr)


def test_unknown_commands_and_flags_are_usage_errors(tmp_path):
    cli = O.Cli(tmp_path)
    # (Bare `lakesync` prints the help and exits 0: test_cli_consistency.py.)
    for args in (["frobnicate"], ["scan"], ["scan", "--table", "a.b", "--format", "xml"],
                 ["table", "delete", "db.t"], ["scan", "--table", "a.b", "--limit", "-1"],
                 ["scan", "--table", "a.b", "--snapshot-id", "1", "--as-of", "2024-01-01T00:00:00"]):
        done = cli.run(*args, config=False)
        assert done.returncode == O.EXIT_INVALID, (args, done.returncode, done.stderr)
    assert not (tmp_path / "wh").exists()
