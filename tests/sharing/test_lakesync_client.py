"""lakesync's own sharing client against lakesync's server: `lakesync scan --sharing` and `lakesync
changes --source sharing` print exactly what `scan --delta` and `changes --source delta` print for the
table behind the share (same rows, same columns, same commit timestamps), for random deltalake
histories, deletion-vector tables and column-mapping tables. And a table that records no change data
feed still gets one over sharing, whose net effect is exactly each version's change (deltalake reads
the versions).

The reference server (a Scala application) is not installed here: Maven Central, as reached from the
project's machines, serves no io.delta:delta-sharing-server artifact (docs/sharing.md)."""
from __future__ import annotations

import collections
import json

import pyarrow as pa
import pytest

import sharing_env  # noqa: F401  (puts tests/delta on sys.path)
import delta_oracles as D
import delta_tables as T
from sharing_env import shares_config

deltalake = pytest.importorskip("deltalake")


def lakesync_json(*args):
    done = D.run_lakesync(*args, "--format", "jsonl")
    assert done.returncode == 0, f"lakesync {' '.join(map(str, args))}: {done.stderr[-3000:]}"
    return [json.loads(line) for line in done.stdout.splitlines()]


def same_rows(a, b):
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    return sorted(a, key=key) == sorted(b, key=key)


@pytest.mark.parametrize("seed,partitioned", [(3, True), (11, False)])
def test_scan_and_changes_over_sharing_equal_the_delta_table(tmp_path, serve, seed, partitioned):
    table = tmp_path / "t"
    T.build_table(table, seed=seed, versions=8, partitioned=partitioned, rows_per_op=20)
    server = serve(shares_config({"t": table}))
    url = f"{server.profile()}#share1.default.t"
    latest = deltalake.DeltaTable(str(table)).version()
    for v in [None, 0, latest // 2, latest]:
        extra = [] if v is None else ["--version", v]
        assert same_rows(lakesync_json("scan", "--sharing", url, *extra),
                         lakesync_json("scan", "--delta", table, *extra)), f"version {v}"
    stamps = D.expected_commit_timestamps(table, 0, latest)
    assert same_rows(lakesync_json("scan", "--sharing", url, "--as-of", D.ms_to_iso(stamps[2])),
                     lakesync_json("scan", "--delta", table, "--version", 2))
    for start, end in [(0, latest), (1, 1), (2, latest - 1)]:
        got = lakesync_json("changes", "--source", "sharing", "--table", url, "--start-version", start,
                            "--end-version", end)
        want = lakesync_json("changes", "--source", "delta", "--table", table, "--start-version", start,
                             "--end-version", end)
        assert got == want, f"[{start}, {end}]"  # same order too: the same plan read by the same code
    got = lakesync_json("changes", "--source", "sharing", "--table", url, "--start-timestamp",
                        D.ms_to_iso(stamps[1]), "--end-timestamp", D.ms_to_iso(stamps[3]))
    want = lakesync_json("changes", "--source", "delta", "--table", table, "--start-version", 1, "--end-version", 3)
    assert got == want


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return D.extract_corpus(tmp_path_factory.mktemp("sharing-corpus-ls"))


@pytest.mark.parametrize("name,start", [("cdf-table-with-cdc-and-dvs", 0), ("cdf-table-with-dv", 0),
                                        ("dv-with-columnmapping", None), ("cdf-column-mapping-id-mode", 1),
                                        ("cdf-table", 0)])
def test_dv_and_column_mapping_tables_over_sharing(tmp_path, serve, corpus, name, start):
    root = corpus[name]
    server = serve(shares_config({"t": root}))
    url = f"{server.profile()}#share1.default.t"
    assert same_rows(lakesync_json("scan", "--sharing", url), lakesync_json("scan", "--delta", root))
    if start is not None:
        got = lakesync_json("changes", "--source", "sharing", "--table", url, "--start-version", start)
        want = lakesync_json("changes", "--source", "delta", "--table", root, "--start-version", start)
        assert got == want


def test_a_table_without_change_data_feed_still_has_one(tmp_path, serve):
    """CDF off: the server derives the feed from add/remove actions. deltalake rewrites files for
    deletes and updates, so unchanged rows of a rewritten file show as delete + insert (documented);
    what must hold is that each version's feed turns the previous snapshot into the next one."""
    from deltalake import DeltaTable, write_deltalake

    table = tmp_path / "nocdf"
    write_deltalake(str(table), pa.table({"id": [1, 2, 3, 4], "v": ["a", "b", "c", "d"]}))
    write_deltalake(str(table), pa.table({"id": [5], "v": ["e"]}), mode="append")
    DeltaTable(str(table)).delete("id = 2")
    DeltaTable(str(table)).update(predicate="id = 3", updates={"v": "'cc'"})
    server = serve(shares_config({"t": table}))
    url = f"{server.profile()}#share1.default.t"
    latest = DeltaTable(str(table)).version()
    feed = lakesync_json("changes", "--source", "sharing", "--table", url, "--start-version", 1)
    for v in range(1, latest + 1):
        before = collections.Counter((r["id"], r["v"]) for r in D.deltalake_snapshot(table, v - 1).to_pylist())
        after = collections.Counter((r["id"], r["v"]) for r in D.deltalake_snapshot(table, v).to_pylist())
        rows = [r for r in feed if r["_commit_version"] == v]
        state = before.copy()
        state.subtract(collections.Counter((r["id"], r["v"]) for r in rows if r["_change_type"] == "delete"))
        state.update(collections.Counter((r["id"], r["v"]) for r in rows if r["_change_type"] == "insert"))
        assert +state == after, f"version {v}"
    # The appended version is exact: one insert.
    assert [(r["id"], r["_change_type"]) for r in feed if r["_commit_version"] == 1] == [(5, "insert")]
    # Directly, the Delta source keeps Spark's rule and refuses the range.
    done = D.run_lakesync("changes", "--source", "delta", "--table", table, "--start-version", 1)
    assert done.returncode != 0 and "enableChangeDataFeed" in done.stderr


def test_client_errors_name_the_problem(tmp_path, serve):
    table = tmp_path / "t"
    T.build_table(table, seed=1, versions=2, partitioned=False, rows_per_op=5)
    server = serve(shares_config({"t": table}))
    bad = server.profile("bad", token="wrong")
    done = D.run_lakesync("scan", "--sharing", f"{bad}#share1.default.t")
    assert done.returncode != 0 and "401" in done.stderr and "bearer token" in done.stderr
    done = D.run_lakesync("scan", "--sharing", f"{server.profile()}#share1.default.nope")
    assert done.returncode == 3 and "RESOURCE_DOES_NOT_EXIST" in done.stderr
    done = D.run_lakesync("scan", "--sharing", f"{server.profile()}#share1.t")
    assert done.returncode == 2 and "PROFILE#SHARE.SCHEMA.TABLE" in done.stderr
    done = D.run_lakesync("scan", "--sharing", f"{tmp_path / 'missing.share'}#share1.default.t")
    assert done.returncode == 3 and "missing.share" in done.stderr
    expired = server.profile("expired", expirationTime="2001-01-01T00:00:00Z")
    done = D.run_lakesync("scan", "--sharing", f"{expired}#share1.default.t")
    assert done.returncode != 0 and "expired" in done.stderr
