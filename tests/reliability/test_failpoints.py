"""The commit's failure paths, injected deterministically (LAKESYNC_FAILPOINTS, common/failpoint.h).

Each path runs `lakesync apply` on a table that already holds rows, with one failpoint armed at the
catalog commit of table::SnapshotUpdate, and checks three things: what the command reports (the
failpoint fired as often as armed, the commit took the attempts it should), the table read by
pyiceberg (an independent reader) afterwards, and the files under the table's folder: nothing the
table does not reference and no pending-files record, except where the outcome was unknown and the
files must be kept (then the next apply deletes them).

- commit.conflict=2: two conflicts, the third attempt commits; every rejected attempt's manifest
  list is deleted.
- commit.conflict=always: every attempt conflicts, the retry budget (commit.retry.num-retries)
  runs out; the apply fails, the table is as it was and nothing it wrote is left.
- commit.after-swap=1: the catalog applied the commit and the answer was lost (commit state
  unknown); the sink reloads the table, finds its source position and reports success.
- commit.before-swap=1: the answer was lost and the commit did not land; the apply fails saying so,
  keeps its files (it cannot know), and the next apply of the same position deletes them.
- io.local-sync=1 (not in the catalog call: the first streamed file's sync, which runs on the IO
  executor and which the commit waits for before asking the catalog): the file cannot be made durable;
  the apply fails naming it, commits nothing and deletes what it wrote.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "interop"))
sys.path.insert(0, str(HERE))
import oracles as O  # noqa: E402
from test_orphans import COLUMNS, batch, unreferenced  # noqa: E402  (one definition of "left behind")

pytestmark = O.needs_lakesync
pytest.importorskip("pyiceberg")


def make_table(tmp_path: Path, version: int) -> O.Cli:
    cli = O.Cli(tmp_path)
    cli.ok("namespace", "create", "db")
    schema = O.schema_file(tmp_path / "schema.yaml", COLUMNS, ["id"])
    cli.ok("table", "create", "db.t", "--schema", schema, "--partition", "region", "--format-version", str(version),
           "--property", "commit.retry.min-wait-ms=10", "--property", "commit.retry.max-wait-ms=50")
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"id": i, "region": ["eu", "us"][i % 2], "amount": f"{i}.00"}) + "\n"
                            for i in range(100)))
    cli.ok("table", "append", "db.t", rows)
    return cli


def apply(cli: O.Cli, tmp_path: Path, b: int, failpoints: str | None = None):
    runner = O.Cli(tmp_path)
    runner.env = {k: v for k, v in cli.env.items() if not k.startswith("LAKESYNC_FAILPOINT")}
    if failpoints:
        runner.env["LAKESYNC_FAILPOINTS"] = failpoints
    return runner.run("apply", "--table", "db.t", "--changes", batch(tmp_path / f"b{b}.parquet", b),
                      "--change-type-column", "op", "--sequence-number-column", "seq", "--equality-columns", "id",
                      "--sink-id", "s", "--source-position", str(b), "--json")


def expected(batches) -> dict[int, str]:
    want = {i: f"{i}.00" for i in range(100)}
    for b in batches:
        want.update({1000 * b + i: "1.00" for i in range(30)})
        want[b] = "7.77"
        want.pop(50 + b)
    return want


def pyiceberg_rows(cli: O.Cli) -> dict[int, str]:
    table = O.sql_catalog(cli).load_table("db.t")
    rows = table.scan().to_arrow().to_pylist()
    got = {r["id"]: f"{r['amount']:.2f}" for r in rows}
    assert len(got) == len(rows), "pyiceberg read duplicated keys"
    return got


def fired(stderr: str, name: str) -> int:
    return stderr.count(f"lakesync: failpoint {name} fired")


def assert_clean(cli: O.Cli):
    left, records = unreferenced(cli, "db.t")
    assert not left, f"files the table does not reference: {sorted(left)}"
    assert not records, f"pending-files records left: {sorted(records)}"


def assert_as_it_was_then_the_next_apply_lands(cli: O.Cli, tmp_path: Path, history):
    """After a failed apply: the table, its history and its folder are as they were, and the next run
    (no failpoint) applies the batch."""
    assert cli.history("db.t") == history
    assert pyiceberg_rows(cli) == expected([])
    assert_clean(cli)
    assert apply(cli, tmp_path, 1).returncode == 0
    assert pyiceberg_rows(cli) == expected([1])
    assert_clean(cli)


@pytest.mark.parametrize("version", [2, 3])
def test_a_conflict_on_the_first_two_attempts_then_the_third_commits(tmp_path, version):
    cli = make_table(tmp_path, version)
    done = apply(cli, tmp_path, 1, "commit.conflict=2")
    assert done.returncode == 0, done.stderr
    assert fired(done.stderr, "commit.conflict") == 2, done.stderr
    [table] = json.loads(done.stdout)["tables"]
    assert table["commit_attempts"] == 3, table
    assert pyiceberg_rows(cli) == expected([1])
    assert_clean(cli)
    # Exactly once: the position is recorded, so applying it again commits nothing.
    again = apply(cli, tmp_path, 1)
    assert again.returncode == 0 and json.loads(again.stdout)["tables"][0]["skipped"], again.stdout
    assert pyiceberg_rows(cli) == expected([1])


def test_retries_exhausted_leave_the_table_and_its_folder_as_they_were(tmp_path):
    cli = make_table(tmp_path, 2)
    history = cli.history("db.t")
    done = apply(cli, tmp_path, 1, "commit.conflict=always")
    assert done.returncode != 0 and done.returncode > 0, done.stderr
    # commit.retry.num-retries defaults to 4: the first attempt and four retries.
    assert fired(done.stderr, "commit.conflict") == 5, done.stderr
    assert "gave up after 5 attempts" in done.stderr, done.stderr
    assert_as_it_was_then_the_next_apply_lands(cli, tmp_path, history)


@pytest.mark.parametrize("version", [2, 3])
def test_an_unknown_outcome_after_the_commit_landed_is_resolved_by_reloading(tmp_path, version):
    cli = make_table(tmp_path, version)
    done = apply(cli, tmp_path, 1, "commit.after-swap=1")
    assert done.returncode == 0, done.stderr
    assert fired(done.stderr, "commit.after-swap") == 1, done.stderr
    [table] = json.loads(done.stdout)["tables"]
    assert "reloading showed it landed" in table.get("message", ""), table
    assert table["snapshot_id"] == cli.history("db.t")[-1]["snapshot-id"]
    assert pyiceberg_rows(cli) == expected([1])
    assert_clean(cli)
    again = apply(cli, tmp_path, 1)
    assert again.returncode == 0 and json.loads(again.stdout)["tables"][0]["skipped"], again.stdout
    assert pyiceberg_rows(cli) == expected([1])


def test_an_unknown_outcome_that_did_not_land_keeps_the_files_until_the_next_apply(tmp_path):
    cli = make_table(tmp_path, 3)
    history = cli.history("db.t")
    done = apply(cli, tmp_path, 1, "commit.before-swap=1")
    assert done.returncode > 0, done.stderr
    assert fired(done.stderr, "commit.before-swap") == 1, done.stderr
    assert "did not land" in done.stderr, done.stderr
    assert cli.history("db.t") == history
    assert pyiceberg_rows(cli) == expected([])
    left, records = unreferenced(cli, "db.t")
    # Kept: the data and delete files the sink wrote and the commit's manifests (a lost answer may
    # still be applied later, so nothing the commit names may go), with their pending-files record.
    assert len(records) == 1, "an unknown outcome must keep its pending-files record"
    assert any("/data/" in f and "deletes" not in f for f in left), f"the sink's data files were not kept: {sorted(left)}"
    assert any("/metadata/snap-" in f for f in left), f"the commit's manifest list was not kept: {sorted(left)}"
    # The next apply of the same position commits it and deletes what the failed one kept.
    again = apply(cli, tmp_path, 1)
    assert again.returncode == 0, again.stderr
    assert pyiceberg_rows(cli) == expected([1])
    assert_clean(cli)


@pytest.mark.parametrize("version", [2, 3])
def test_a_file_that_cannot_be_made_durable_fails_the_apply_and_leaves_nothing(tmp_path, version):
    # io.local-sync: the fsync of the first data, delete or deletion-vector file the apply streams fails.
    cli = make_table(tmp_path, version)
    history = cli.history("db.t")
    done = apply(cli, tmp_path, 1, "io.local-sync=1")
    assert done.returncode > 0, done.stderr
    assert fired(done.stderr, "io.local-sync") == 1, done.stderr
    assert "syncing file://" in done.stderr and "/db/t/" in done.stderr, done.stderr
    assert_as_it_was_then_the_next_apply_lands(cli, tmp_path, history)


def test_a_misspelt_failpoint_spec_stops_the_process(tmp_path):
    """A test that arms a point with a typo must not pass without the failure it meant to cause."""
    cli = make_table(tmp_path, 2)
    done = apply(cli, tmp_path, 1, "commit.conflict=twice")
    assert done.returncode == 2 and "LAKESYNC_FAILPOINTS" in done.stderr, done.stderr
