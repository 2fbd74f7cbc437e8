"""`lakesync apply` with rows or options it cannot apply.

The contract (issue text, docs/sink.md, docs/cli.md): rows that cannot be applied (unknown change type,
null key, null sequence) fail the whole batch with a message naming the row and the column, and nothing
changes (no snapshot, no files left behind); with `--error-output FILE` they go to a dead-letter Parquet
file with an `_error` column giving the reason, and the other rows are applied: never dropped silently.
Bad options are errors naming the key: an unknown `--set` key, missing equality columns when the table
must be created, an input column the table does not have.
"""

from __future__ import annotations

import decimal
import hashlib
import json
import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync

pq = pytest.importorskip("pyarrow.parquet")

TABLE_COLUMNS = [
    {"name": "id", "type": "long", "required": True},
    {"name": "region", "type": "string", "required": False},
    {"name": "amount", "type": "decimal(12, 2)", "required": False},
]
CHANGE_COLUMNS = [{**c, "required": False} for c in TABLE_COLUMNS] + [
    {"name": "op", "type": "string", "required": False},
    {"name": "seq", "type": "long", "required": False},
]
NAME = "db.t"
D = decimal.Decimal


def apply_args(path: Path, *extra, position=None) -> list:
    args = ["apply", "--table", NAME, "--changes", path, "--change-type-column", "op",
            "--change-type-map", "c=INSERT,ub=UPDATE_BEFORE,u=UPDATE_AFTER,d=DELETE",
            "--sequence-number-column", "seq", "--equality-columns", "id", "--partition-fields", "region",
            "--table-properties", "format-version=3", "--sink-id", "s", *extra]
    if position is not None:
        args += ["--source-position", str(position)]
    return args


def state(cli: O.Cli) -> dict:
    """The catalog's rows and every file under the warehouse with a hash of its bytes."""
    files = {}
    for rel in O.list_files(cli.warehouse):
        if not rel.startswith("catalog.db"):
            files[rel] = hashlib.sha256((cli.warehouse / rel).read_bytes()).hexdigest()
    tables, namespaces = [], []
    if cli.catalog_db.exists():
        con = sqlite3.connect(f"file:{cli.catalog_db}?mode=ro", uri=True)
        try:
            tables = sorted(con.execute("SELECT * FROM iceberg_tables").fetchall())
            namespaces = sorted(con.execute("SELECT * FROM iceberg_namespace_properties").fetchall())
        except sqlite3.OperationalError:  # no catalog tables yet
            pass
        finally:
            con.close()
    return {"tables": tables, "namespaces": namespaces, "files": files}


def expect_failure(cli: O.Cli, args: list, *needles: str, code: int = O.EXIT_INVALID) -> str:
    """Runs a failing apply: exit code, an error line naming every needle, and nothing changed."""
    before = state(cli)
    rc, stderr = cli.fail(*args)
    assert rc == code, f"exit code {rc}, expected {code}; stderr: {stderr}"
    lines = [line for line in stderr.splitlines() if line.startswith("lakesync: error: ")]
    assert lines, f"no 'lakesync: error:' line in stderr: {stderr!r}"
    for needle in needles:
        assert str(needle) in lines[-1], f"the error does not name {needle!r}: {lines[-1]}"
    after = state(cli)
    assert after["tables"] == before["tables"], "the catalog's table rows changed"
    assert after["namespaces"] == before["namespaces"], "the catalog's namespaces changed"
    assert after["files"] == before["files"], (
        f"files added {sorted(set(after['files']) - set(before['files']))}, "
        f"removed {sorted(set(before['files']) - set(after['files']))}")
    return lines[-1]


GOOD = [(1, "eu", D("1.00"), "c", 10), (2, "us", D("2.50"), "c", 10), (3, "eu", D("3.00"), "c", 10)]


@pytest.fixture
def cli(tmp_path):
    c = O.Cli(tmp_path)
    O.write_parquet(tmp_path / "good.parquet", GOOD, CHANGE_COLUMNS)
    c.ok(*apply_args(tmp_path / "good.parquet", position=1))
    return c


def scan(cli: O.Cli) -> list[tuple]:
    return sorted(O.normalise_rows(cli.scan_jsonl(NAME), TABLE_COLUMNS, "jsonl"))


def expected(rows) -> list[tuple]:
    return sorted(O.normalise_rows(rows, TABLE_COLUMNS, "python"))


# One bad row at file row 4 (1-based) among good ones; the message must name that row and the column.
BAD_ROWS = {
    "unknown-change-type": ((4, "ap", D("4.00"), "zz", 11), "op", "zz"),
    "null-key": ((None, "ap", D("4.00"), "c", 11), "id", "null"),
    "null-sequence": ((4, "ap", D("4.00"), "c", None), "seq", "null"),
    "null-change-type": ((4, "ap", D("4.00"), None, 11), "op", "null"),
}
BATCH_HEAD = [(1, "eu", D("1.00"), "ub", 11), (1, "us", D("9.00"), "u", 11), (5, "us", D("5.00"), "c", 11)]
BATCH_TAIL = [(2, None, None, "d", 12), (6, "eu", D("6.00"), "c", 12)]


@pytest.mark.parametrize("case", list(BAD_ROWS))
def test_a_bad_row_fails_the_batch_naming_the_row_and_column(tmp_path, cli, case):
    bad, column, detail = BAD_ROWS[case]
    path = O.write_parquet(tmp_path / "bad.parquet", BATCH_HEAD + [bad] + BATCH_TAIL, CHANGE_COLUMNS)
    snapshots = cli.snapshot_ids(NAME)
    line = expect_failure(cli, apply_args(path, position=2), "bad.parquet", "row 4", f"'{column}'", detail)
    assert "row 1:" not in line and "row 5" not in line, line
    assert cli.snapshot_ids(NAME) == snapshots
    assert scan(cli) == expected([r[:3] for r in GOOD])


def test_bad_rows_go_to_the_dead_letter_file_and_the_rest_is_applied(tmp_path, cli):
    bads = [b for b, _, _ in BAD_ROWS.values()]
    rows = BATCH_HEAD + bads + BATCH_TAIL  # bad rows at file rows 4..7
    path = O.write_parquet(tmp_path / "mixed.parquet", rows, CHANGE_COLUMNS)
    letters = tmp_path / "out" / "dead.parquet"
    letters.parent.mkdir()
    out = json.loads(cli.ok(*apply_args(path, "--error-output", letters, "--json", position=2)))
    assert out["dead_letters"] == len(bads)
    assert O.local_path(out["dead_letter_location"]) == str(letters)
    [t] = out["tables"]
    assert not t["skipped"]
    c = out["changes"]
    assert c["total"] == len(rows)
    assert c["inserts"] + c["update_befores"] + c["update_afters"] + c["deletes"] + out["dead_letters"] == len(rows)

    table = pq.read_table(letters)
    assert table.column_names == [col["name"] for col in CHANGE_COLUMNS] + ["_error"]
    got = O.normalise_rows(table.select([col["name"] for col in CHANGE_COLUMNS]).to_pylist(), CHANGE_COLUMNS,
                           "arrow")
    assert got == O.normalise_rows(bads, CHANGE_COLUMNS, "python")
    errors = table["_error"].to_pylist()
    for n, (error, (_, column, detail)) in enumerate(zip(errors, BAD_ROWS.values())):
        assert f"row {4 + n}" in error and f"'{column}'" in error and detail in error, error

    # The good rows are applied: id 1 moved to us, 5 and 6 inserted, 2 deleted.
    want = [(1, "us", D("9.00")), (3, "eu", D("3.00")), (5, "us", D("5.00")), (6, "eu", D("6.00"))]
    assert scan(cli) == expected(want)
    summary = cli.current_snapshot(NAME)["summary"]
    assert summary["lakesync.source-position.s"] == "2"


def test_no_dead_letter_file_without_bad_rows(tmp_path, cli):
    path = O.write_parquet(tmp_path / "fine.parquet", BATCH_HEAD + BATCH_TAIL, CHANGE_COLUMNS)
    letters = tmp_path / "dead.parquet"
    out = json.loads(cli.ok(*apply_args(path, "--error-output", letters, "--json", position=2)))
    assert out["dead_letters"] == 0 and out["dead_letter_location"] == ""
    assert not letters.exists()


@pytest.mark.parametrize("key", ["no_such_option", "sorter_memory_mbb"])
def test_an_unknown_sink_option_is_an_error_naming_the_key(tmp_path, cli, key):
    path = O.write_parquet(tmp_path / "fine.parquet", BATCH_HEAD, CHANGE_COLUMNS)
    expect_failure(cli, apply_args(path, "--set", f"{key}=5", position=2), key)


def test_equality_columns_are_required_to_create_the_table(tmp_path):
    cli = O.Cli(tmp_path)
    path = O.write_parquet(tmp_path / "c.parquet", GOOD, CHANGE_COLUMNS)
    args = apply_args(path, position=1)
    i = args.index("--equality-columns")
    del args[i:i + 2]
    expect_failure(cli, args, "equality_columns", NAME)
    rc, _ = cli.fail("table", "describe", NAME)
    assert rc == O.EXIT_NOT_FOUND


def test_an_input_column_that_is_not_in_the_table_is_an_error_naming_it(tmp_path, cli):
    columns = CHANGE_COLUMNS[:3] + [{"name": "colour", "type": "string", "required": False}] + CHANGE_COLUMNS[3:]
    rows = [(r[0], r[1], r[2], "red", r[3], r[4]) for r in BATCH_HEAD]
    path = O.write_parquet(tmp_path / "extra.parquet", rows, columns)
    expect_failure(cli, apply_args(path, position=2), "'colour'", NAME)


def test_a_missing_control_column_is_an_error_naming_it(tmp_path, cli):
    path = O.write_parquet(tmp_path / "noseq.parquet", [r[:4] for r in BATCH_HEAD], CHANGE_COLUMNS[:4])
    expect_failure(cli, apply_args(path, position=2), "'seq'")


def test_upsert_with_equality_deletes_needs_the_partition_among_the_keys(tmp_path, cli):
    path = O.write_parquet(tmp_path / "up.parquet", [r for r in BATCH_HEAD if r[3] != "ub"], CHANGE_COLUMNS)
    expect_failure(cli, apply_args(path, "--upsert", "--delete-strategy", "equality", position=2), "region")


def test_a_malformed_source_position_is_an_error_naming_it(tmp_path, cli):
    path = O.write_parquet(tmp_path / "fine.parquet", BATCH_HEAD, CHANGE_COLUMNS)
    expect_failure(cli, apply_args(path, position="v12"), "v12")
