"""Same input, same output, whatever the thread count (issue 15): `--threads 1`, `2` and `4` must
write byte-identical data files and deletes (key shards collapsed and written in parallel, deletion
vectors and delete files written in parallel), and read byte-identical scans, change feeds and
changelogs. Tables are written with small row groups and files, so that reads and key resolution
really split into many units of work.

File names hold uuids, so files are compared by content: data files as the multiset of their bytes,
deletion vectors as the Puffin blob bytes (read at the manifest entry's offset and size) keyed by
the bytes of the data file they delete from, equality delete files by their bytes, position delete
files by their rows with each data file path replaced by that file's bytes. Manifests are
read with fastavro, files with plain Python reads; `lakesync scan` output is compared byte for byte
and checked against pyiceberg's read of the same table."""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

SMALL_FILES = ("write.parquet.row-group-size-bytes=16384,write.target-file-size-bytes=200000,"
               "write.parquet.page-size-bytes=4096")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def change_batches(seed: int = 15) -> list[pa.Table]:
    """Three batches of changes: 40,000 inserts, then updates, deletes and inserts of random keys."""
    rng = random.Random(seed)
    live: set[int] = set()
    batches = []
    seq = 0
    for round_ in range(3):
        rows = {"id": [], "name": [], "amount": [], "_change_type": [], "_seq": []}

        def add(key: int, kind: str):
            nonlocal seq
            seq += 1
            rows["id"].append(key)
            rows["name"].append(f"n{key}-{round_}-{rng.randrange(1000)}")
            rows["amount"].append(rng.random() * 1000)
            rows["_change_type"].append(kind)
            rows["_seq"].append(seq)

        if round_ == 0:
            for k in range(40_000):
                add(k, "insert")
                live.add(k)
        else:
            keys = sorted(live)
            for k in rng.sample(keys, 6_000):
                add(k, "update_postimage")
            for k in rng.sample(keys, 3_000):
                if k in live:
                    add(k, "delete")
                    live.discard(k)
            for k in range(40_000 * round_ + 100_000, 40_000 * round_ + 104_000):
                add(k, "insert")
                live.add(k)
        batches.append(pa.table(rows))
    return batches


def live_keys() -> set[int]:
    """The keys left after change_batches() in order: what a scan of the applied table must hold."""
    live: set[int] = set()
    for batch in change_batches():
        for key, kind in zip(batch["id"].to_pylist(), batch["_change_type"].to_pylist()):
            if kind == "delete":
                live.discard(key)
            else:
                live.add(key)
    return live


def apply_all(cli: O.Cli, threads: int, tmp: Path, table: str, *extra: str) -> None:
    for i, batch in enumerate(change_batches()):
        path = tmp / f"changes-{i}.parquet"
        pq.write_table(batch, path)
        cli.ok("--threads", threads, "apply", "--table", table, "--changes", path, "--equality-columns", "id",
               "--change-type-column", "_change_type", "--sequence-number-column", "_seq",
               "--table-properties", SMALL_FILES + extra[0], *extra[1:])


def table_contents(cli: O.Cli, table: str) -> dict:
    """The current snapshot's files by content: data file bytes, DV blobs by their data file's bytes,
    equality delete file bytes."""
    [row] = [r for r in O.catalog_rows(cli.catalog_db) if f"{r[1]}.{r[2]}" == table]
    location = next(v for v in row if isinstance(v, str) and v.endswith(".metadata.json"))
    metadata = json.loads(Path(O.local_path(location)).read_text())
    entries = O.manifest_entries(metadata)
    data_bytes = {}
    for e in entries:
        f = e["data_file"]
        if f["content"] == 0:
            data_bytes[f["file_path"]] = Path(O.local_path(f["file_path"])).read_bytes()
    out = {"data": sorted(sha(b) for b in data_bytes.values()), "dvs": [], "equality": [], "positions": []}
    for e in entries:
        f = e["data_file"]
        if f["content"] == 1 and f.get("content_offset") is not None:
            with open(O.local_path(f["file_path"]), "rb") as fh:
                fh.seek(f["content_offset"])
                blob = fh.read(f["content_size_in_bytes"])
            out["dvs"].append((sha(data_bytes[f["referenced_data_file"]]), sha(blob)))
        elif f["content"] == 2:
            out["equality"].append(sha(Path(O.local_path(f["file_path"])).read_bytes()))
        elif f["content"] == 1:
            # A position delete file names data files by path (uuids): compare its rows with each
            # path replaced by the bytes of the file it names (sorted: rows are in path order, and
            # paths hold a random uuid per run).
            deletes = pq.read_table(O.local_path(f["file_path"]))
            rows = [(sha(data_bytes[p]), pos) for p, pos in zip(deletes["file_path"].to_pylist(),
                                                               deletes["pos"].to_pylist())]
            out["positions"].append(sha(repr(sorted(rows)).encode()))
    for key in ("dvs", "equality", "positions"):
        out[key].sort()
    return out


# --sorter-memory-mb 1: key shards aim at a quarter of it (plan/change_collapser.h), so these batches
# collapse in several key shards, in memory (the later batches) and after spilling (the first), and
# each shard writes its own data files.
LAYOUTS = {
    "v3-dv": (",format-version=3", "--sorter-memory-mb", "1"),
    "v3-dv-partitioned": (",format-version=3", "--partition-fields", "bucket(id, 4)", "--sorter-memory-mb", "1"),
    "v2-position": (",format-version=2", "--sorter-memory-mb", "1"),
    "v2-equality": (",format-version=2", "--delete-strategy", "equality", "--sorter-memory-mb", "1"),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_apply_writes_the_same_files_with_1_2_and_4_threads(tmp_path, layout):
    extra = LAYOUTS[layout]
    contents = {}
    scans = {}
    for threads in (1, 2, 4):
        work = tmp_path / f"t{threads}"
        work.mkdir()
        cli = O.Cli(work)
        apply_all(cli, threads, work, "lake.t", *extra)
        contents[threads] = table_contents(cli, "lake.t")
        for scan_threads in (1, 4):
            out = work / f"scan-{scan_threads}.parquet"
            cli.ok("--threads", scan_threads, "scan", "lake.t", "--format", "parquet", "--output", out)
            scans[(threads, scan_threads)] = out.read_bytes()
        if threads == 1:
            # What the scan read is the table pyiceberg reads (equality deletes: pyiceberg refuses them,
            # so the expected live keys are derived from the generated changes instead).
            got = pq.read_table(work / "scan-1.parquet")
            assert sorted(got["id"].to_pylist()) == sorted(live_keys())
            if layout != "v2-equality":
                expected = O.sql_catalog(cli).load_table("lake.t").scan().to_arrow()
                assert got.sort_by("id").equals(expected.select(got.column_names).sort_by("id"))
    assert len(contents[1]["data"]) > 3, contents[1]  # the table really has many files
    if layout.startswith("v3"):
        assert contents[1]["dvs"], "no deletion vectors were written"
    elif layout == "v2-position":
        assert contents[1]["positions"], "no position delete files were written"
    else:
        assert contents[1]["equality"], "no equality deletes were written"
    assert contents[1] == contents[2]
    assert contents[1] == contents[4]
    assert len(set(scans.values())) == 1, "scan output differs between thread counts"


@pytest.mark.parametrize("layout", ["v3-dv", "v2-equality"])
def test_wide_scan_is_the_same_with_1_2_and_4_threads(tmp_path, layout):
    """A table of 11 columns is scanned file by file, each batch decoded column-parallel and finished
    (deletes applied, columns projected) on the pool while the next decodes (PreferSerialUnits: at
    least twice as many columns as threads); the narrow tables above take row-group units instead."""
    extra = LAYOUTS[layout]
    cli = O.Cli(tmp_path)
    rng = random.Random(5)
    for i, batch in enumerate(change_batches()):
        path = tmp_path / f"changes-{i}.parquet"
        pq.write_table(_with_extra_columns(batch, 8, rng), path)
        cli.ok("apply", "--table", "lake.w", "--changes", path, "--equality-columns", "id",
               "--change-type-column", "_change_type", "--sequence-number-column", "_seq",
               "--table-properties", SMALL_FILES + extra[0], *extra[1:])
    scans = {}
    for threads in (1, 2, 4):
        out = tmp_path / f"scan-{threads}.parquet"
        cli.ok("--threads", threads, "scan", "lake.w", "--format", "parquet", "--output", out)
        scans[threads] = out.read_bytes()
    assert len(set(scans.values())) == 1, "scan output differs between thread counts"
    got = pq.read_table(tmp_path / "scan-1.parquet")
    assert got.num_columns == 11
    assert sorted(got["id"].to_pylist()) == sorted(live_keys())
    if layout == "v3-dv":
        expected = O.sql_catalog(cli).load_table("lake.w").scan().to_arrow()
        assert got.sort_by("id").equals(expected.select(got.column_names).sort_by("id"))
    # A limit ends the stream early with the scan's first rows, whatever ran ahead.
    limited = tmp_path / "scan-limit.parquet"
    cli.ok("--threads", 2, "scan", "lake.w", "--limit", 30_000, "--format", "parquet", "--output", limited)
    assert pq.read_table(limited).equals(got.slice(0, 30_000))


def _with_extra_columns(table, extra, rng):
    """`table` with `extra` more columns (strings and numbers derived from the id): a feed of many
    columns is read file by file with each batch decoded column-parallel (PreferSerialUnits), one of
    few columns by row-group units, so the width picks which parallel path is tested."""
    ids = table.column("id").to_pylist()
    for i in range(extra):
        if i % 2:
            table = table.append_column(f"s{i}", pa.array([f"{k * (i + 3)}-{rng.random():.6f}" for k in ids]))
        else:
            table = table.append_column(f"n{i}", pa.array([k * (i + 1) for k in ids], pa.int64()))
    return table


@pytest.mark.parametrize("extra_columns", [0, 8], ids=["row-group-units", "streamed-wide"])
def test_delta_change_feed_is_the_same_with_1_2_and_4_threads(tmp_path, extra_columns):
    deltalake = pytest.importorskip("deltalake")
    path = tmp_path / "delta"
    rng = random.Random(7)
    # Wide: a base file of several 64k-row batches, so batches of one file are in flight together.
    rows = 150_000 if extra_columns else 20_000
    base = pa.table({"id": list(range(rows)), "v": [rng.random() for _ in range(rows)]})
    base = _with_extra_columns(base, extra_columns, rng)
    deltalake.write_deltalake(str(path), base, configuration={"delta.enableChangeDataFeed": "true"})
    for round_ in range(3):
        dt = deltalake.DeltaTable(str(path))
        keys = rng.sample(range(rows), 2_000)
        source = _with_extra_columns(pa.table({"id": keys, "v": [rng.random() for _ in keys]}), extra_columns, rng)
        (dt.merge(source, "t.id = s.id", source_alias="s", target_alias="t")
         .when_matched_update_all().when_not_matched_insert_all().execute())
        added = list(range(1_000_000 + round_ * 1000, 1_000_000 + round_ * 1000 + 1000))
        added = _with_extra_columns(pa.table({"id": added, "v": [0.5] * 1000}), extra_columns, rng)
        deltalake.write_deltalake(str(path), added, mode="append")
    cli = O.Cli(tmp_path)
    outputs = set()
    for threads in (1, 2, 4):
        out = tmp_path / f"feed-{threads}.parquet"
        cli.ok("--threads", threads, "changes", "--source", "delta", "--table", path, "--start-version", 0,
               "--format", "parquet", "--output", out)
        outputs.add(out.read_bytes())
    assert len(outputs) == 1, "change feed output differs between thread counts"
    feed = pq.read_table(tmp_path / "feed-1.parquet")
    expected = pa.table(deltalake.DeltaTable(str(path)).load_cdf(0).read_all())
    assert feed.num_rows == expected.num_rows
    columns = base.column_names + ["_change_type", "_commit_version"]
    order = [(k, "ascending") for k in ("id", "_change_type", "_commit_version")]
    assert feed.select(columns).sort_by(order).equals(expected.select(columns).cast(feed.select(columns).schema)
                                                      .sort_by(order))
    # A limit ends the stream early with the feed's first rows, whatever ran ahead.
    limited = tmp_path / "feed-limit.parquet"
    cli.ok("--threads", 2, "changes", "--source", "delta", "--table", path, "--start-version", 0, "--limit", 70_000,
           "--format", "parquet", "--output", limited)
    assert pq.read_table(limited).equals(feed.slice(0, 70_000))


def test_threads_setting_is_checked(tmp_path):
    cli = O.Cli(tmp_path)
    code, err = cli.fail("--threads", 0, "scan", "lake.t")
    assert "threads" in err.lower(), err
    cli = O.Cli(tmp_path, env={"LAKESYNC_THREADS": "many"})
    code, err = cli.fail("namespace", "list")
    assert "LAKESYNC_THREADS" in err, err
    job = O.write_yaml(tmp_path / "job.yaml", {
        "source": {"type": "delta_lake_cdc", "table": str(tmp_path / "missing"), "start_version": 0},
        "sink": {"table": "c.d", "equality_columns": ["id"]}, "threads": 0})
    code, err = O.Cli(tmp_path).fail("run", job, "--once")
    assert "threads must be a whole number" in err, err


def expected_change_counts() -> list[tuple[int, int]]:
    """Per generated batch: (rows that leave the table, rows that enter it), i.e. deletes + updates and
    inserts + updates, from each key's last change in the batch (the apply collapses by key and _seq)."""
    out = []
    live: set[int] = set()
    for batch in change_batches():
        last: dict[int, str] = {}
        for key, kind, seq in sorted(zip(batch["id"].to_pylist(), batch["_change_type"].to_pylist(),
                                         batch["_seq"].to_pylist()), key=lambda r: r[2]):
            last[key] = kind
        leave = enter = 0
        for key, kind in last.items():
            if key in live:
                leave += 1
            if kind == "delete":
                live.discard(key)
            else:
                enter += 1
                live.add(key)
        out.append((leave, enter))
    return out


@pytest.mark.parametrize("layout", ["v3-dv", "v2-position"])
def test_iceberg_changelog_is_the_same_with_1_2_and_4_threads(tmp_path, layout):
    """The changelog of a table written in three commits, read at 1, 2 and 4 threads: byte-identical
    output (snapshots whose data files are read and hashed in parallel, with many small files and row
    groups), and per snapshot the row counts the generated batches imply."""
    cli = O.Cli(tmp_path)
    apply_all(cli, 1, tmp_path, "lake.t", *LAYOUTS[layout])
    outputs = {}
    for threads in (1, 2, 4):
        out = tmp_path / f"changelog-{threads}.parquet"
        cli.ok("--threads", threads, "changes", "--source", "iceberg", "--table", "lake.t", "--format", "parquet",
               "--output", out)
        outputs[threads] = out.read_bytes()
    changes = pq.read_table(tmp_path / "changelog-1.parquet")
    by_ordinal: dict[int, dict[str, int]] = {}
    for ordinal, kind in zip(changes["_change_ordinal"].to_pylist(), changes["_change_type"].to_pylist()):
        counts = by_ordinal.setdefault(ordinal, {})
        counts[kind] = counts.get(kind, 0) + 1
    got = [(c.get("DELETE", 0) + c.get("UPDATE_BEFORE", 0), c.get("INSERT", 0) + c.get("UPDATE_AFTER", 0))
           for _, c in sorted(by_ordinal.items())]
    assert got == expected_change_counts()
    assert any("UPDATE_BEFORE" in c for c in by_ordinal.values()), by_ordinal  # updates are paired by key
    assert outputs[1] == outputs[2], "changelog output differs between 1 and 2 threads"
    assert outputs[1] == outputs[4], "changelog output differs between 1 and 4 threads"
