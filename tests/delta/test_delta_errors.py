"""Bad ranges, bad options and broken tables: lakesync must exit non-zero with the documented code
(2 bad range/options, 3 not found, 4 corrupt, 1 unsupported reader feature), name the version /
file / feature, and print nothing on standard output (no partial feed). Inputs are deltalake-written tables (and corpus tables for
deletion vectors) broken on purpose; where an oracle exists, it is shown to refuse the same input.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

import delta_oracles as D
import delta_tables as T

pytestmark = D.needs_lakesync


# ---------------------------------------------------------------------------------------------
# A small history: v0 create (CDF on), v1 append, v2 update (cdc), v3 delete (cdc), checkpoint at
# v3, v4 append, v5 append.


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    from deltalake import DeltaTable, write_deltalake

    path = tmp_path_factory.mktemp("delta-errors") / "base"
    rng = random.Random(5)
    write_deltalake(str(path), T.make_rows(rng, list(range(20))), configuration={"delta.enableChangeDataFeed": "true"})
    write_deltalake(str(path), T.make_rows(rng, list(range(20, 30))), mode="append")
    DeltaTable(str(path)).update(predicate="id < 5", updates={"note": "'u'"})
    DeltaTable(str(path)).delete("id >= 25")
    DeltaTable(str(path)).create_checkpoint()
    write_deltalake(str(path), T.make_rows(rng, list(range(30, 40))), mode="append")
    write_deltalake(str(path), T.make_rows(rng, list(range(40, 45))), mode="append")
    assert max(D.commit_files(path)) == 5
    return path


@pytest.fixture
def table(base, tmp_path) -> Path:
    """A private copy (modification times kept) that a test may break."""
    copy = tmp_path / "t"
    shutil.copytree(base, copy)
    return copy


def actions(table: Path, version: int) -> list[dict]:
    return [json.loads(line) for line in D.commit_files(table)[version].read_text().splitlines()]


def file_of(table: Path, version: int, kind: str) -> Path:
    """The one `add` (dataChange=true) or `cdc` file of a commit."""
    [path] = [a[kind]["path"] for a in actions(table, version)
              if kind in a and (kind == "cdc" or a[kind].get("dataChange"))]
    return table / path


def write_commit(table: Path, version: int, acts: list[dict]) -> None:
    (table / "_delta_log" / f"{version:020d}.json").write_text("".join(json.dumps(a) + "\n" for a in acts))


def commit_info(op: str = "MANUAL") -> dict:
    return {"commitInfo": {"timestamp": 1, "operation": op}}


def metadata_at(table: Path, version: int) -> dict:
    meta = None
    for v in range(version + 1):
        for a in actions(table, v):
            if "metaData" in a:
                meta = a["metaData"]
    return json.loads(json.dumps(meta))


def _names(err: str, fact: str | int) -> bool:
    """A fact is a version (an int: "version N" or its commit file name, see D.names_version) or a
    string that must appear (case-insensitive): a file name, a feature, a flag value."""
    if isinstance(fact, int):
        return D.names_version(err, fact)
    return fact.lower() in err.lower()


def fails(*args, code: int | None, facts: list) -> str:
    got, err = D.lakesync_fails(*args)
    if code is not None:
        assert got == code, f"exit {got}, expected {code}: {err}"
    for fact in facts:
        assert _names(err, fact), f"message does not name {fact!r}: {err}"
    return err


def changes(table, start=None, end=None, by="version"):
    return D.changes_args(table, start, end, by=by)


# ---------------------------------------------------------------------------------------------
# Ranges and options


def test_start_after_end(table):
    fails(*changes(table, 4, 2), code=D.EXIT_INVALID, facts=[4, 2])


def test_start_version_beyond_latest(table):
    fails(*changes(table, 9), code=D.EXIT_INVALID, facts=[9])


def test_end_version_beyond_latest(table):
    fails(*changes(table, 0, 12), code=D.EXIT_INVALID, facts=[12])


def test_start_timestamp_after_last_commit(table):
    last = D.expected_commit_timestamps(table, 0, 5)[5]
    fails(*changes(table, last + 60_000, by="timestamp"), code=D.EXIT_INVALID, facts=[str(last + 60_000)])


def test_end_timestamp_before_first_commit(table):
    first = D.expected_commit_timestamps(table, 0, 5)[0]
    fails(*changes(table, first - 120_000, first - 60_000, by="timestamp"), code=D.EXIT_INVALID,
          facts=[str(first - 60_000)])


def test_start_timestamp_after_end_timestamp(table):
    ts = D.expected_commit_timestamps(table, 0, 5)
    fails(*changes(table, D.ms_to_iso(ts[4]), D.ms_to_iso(ts[1]), by="timestamp"), code=D.EXIT_INVALID, facts=[])


def test_unparseable_timestamp(table):
    fails(*changes(table, "yesterday-ish", by="timestamp"), code=D.EXIT_INVALID, facts=["yesterday-ish"])


def test_version_and_timestamp_on_one_side(table):
    fails("changes", "--source", "delta", "--table", table, "--start-version", 0, "--start-timestamp",
          "2020-01-01T00:00:00Z", "--format", "jsonl", code=D.EXIT_INVALID, facts=[])


def test_no_start_bound(table):
    fails("changes", "--source", "delta", "--table", table, "--format", "jsonl", code=D.EXIT_INVALID, facts=[])


def test_unknown_metadata_column(table):
    fails("changes", "--source", "delta", "--table", table, "--start-version", 0, "--columns", "_commit_snapshot_id",
          "--format", "jsonl", code=D.EXIT_INVALID, facts=["_commit_snapshot_id"])


def test_table_that_does_not_exist(tmp_path):
    fails(*changes(tmp_path / "nowhere", 0), code=D.EXIT_NOT_FOUND, facts=["nowhere"])
    fails("scan", "--delta", tmp_path / "nowhere", "--format", "jsonl", code=D.EXIT_NOT_FOUND, facts=["nowhere"])


def test_scan_version_beyond_latest(table):
    fails("scan", "--delta", table, "--version", 17, "--format", "jsonl", code=D.EXIT_INVALID, facts=[17])


# ---------------------------------------------------------------------------------------------
# CDF switched off, schema changes


def _set_property(table: Path, version: int, key: str, value: str) -> None:
    meta = metadata_at(table, version - 1)
    meta["configuration"][key] = value
    write_commit(table, version, [commit_info("SET TBLPROPERTIES"), {"metaData": meta}])


def test_cdf_enabled_later_refuses_earlier_start(tmp_path):
    from deltalake import DeltaTable, write_deltalake

    path = tmp_path / "late"
    rng = random.Random(2)
    write_deltalake(str(path), T.make_rows(rng, list(range(10))))
    DeltaTable(str(path)).alter.set_table_properties({"delta.enableChangeDataFeed": "true"})
    write_deltalake(str(path), T.make_rows(rng, list(range(10, 20))), mode="append")
    DeltaTable(str(path)).delete("id < 3")
    # the oracle refuses the range that starts before the enabling commit too
    with pytest.raises(Exception):
        D.deltalake_cdf(path, 0, 3)
    fails(*changes(path, 0, 3), code=D.EXIT_INVALID, facts=[0, "change data"])
    # starting at the enabling commit is fine (the snapshot at start includes commit start)
    names = D.delta_schema(path).names
    types = {f.name: f.type for f in D.delta_schema(path)} | D.META_TYPES
    cols = names + D.META_COLUMNS
    ours = D.rows_of_json(D.lakesync_changes(path, 1, 3), cols, types)
    expected = D.rows_of_arrow(D.deltalake_cdf(path, 1, 3), cols, types)
    D.assert_same_multiset(D.without(ours, cols, "_commit_timestamp"), D.without(expected, cols, "_commit_timestamp"),
                           "[1, 3] after enabling CDF at v1")


def test_cdf_switched_off_inside_range(table):
    _set_property(table, 6, "delta.enableChangeDataFeed", "false")
    _set_property(table, 7, "delta.enableChangeDataFeed", "true")
    from deltalake import write_deltalake

    write_deltalake(str(table), T.make_rows(random.Random(8), list(range(100, 104))), mode="append")  # v8
    assert max(D.commit_files(table)) == 8
    fails(*changes(table, 2, 8), code=D.EXIT_INVALID, facts=[6, "change data"])
    # a range that begins after CDF came back is fine
    assert D.run_lakesync(*changes(table, 7, 8)).returncode == 0


def test_cdf_off_at_end(table):
    _set_property(table, 6, "delta.enableChangeDataFeed", "false")
    fails(*changes(table, 0, 6), code=D.EXIT_INVALID, facts=[6, "change data"])


def _with_column(meta: dict, name: str, type_: str) -> dict:
    schema = json.loads(meta["schemaString"])
    schema["fields"].append({"name": name, "type": type_, "nullable": True, "metadata": {}})
    meta["schemaString"] = json.dumps(schema)
    return meta


def test_additive_schema_change_in_range_refused_by_default(tmp_path):
    from deltalake import write_deltalake

    path = tmp_path / "evolve"
    rng = random.Random(3)
    write_deltalake(str(path), T.make_rows(rng, list(range(10))), configuration={"delta.enableChangeDataFeed": "true"})
    more = T.make_rows(rng, list(range(10, 15)))
    import pyarrow as pa

    more = more.append_column("extra", pa.array(["x"] * more.num_rows))
    write_deltalake(str(path), more, mode="append", schema_mode="merge")
    write_deltalake(str(path), more, mode="append")
    fails(*changes(path, 0, 2), code=D.EXIT_INVALID, facts=[1])
    # ranges that do not cross the change are fine
    assert D.run_lakesync(*changes(path, 0, 0)).returncode == 0
    assert D.run_lakesync(*changes(path, 2, 2)).returncode == 0


def test_schema_change_and_revert_inside_range(table):
    """delta.md trap 13: start and end schemas are equal, a metaData in between differs."""
    meta = metadata_at(table, 5)
    write_commit(table, 6, [commit_info("ADD COLUMNS"), {"metaData": _with_column(json.loads(json.dumps(meta)),
                                                                                   "extra", "string")}])
    write_commit(table, 7, [commit_info("REPLACE COLUMNS"), {"metaData": meta}])
    fails(*changes(table, 4, 7), code=D.EXIT_INVALID, facts=[6])


def test_type_change_in_range(table):
    meta = metadata_at(table, 5)
    schema = json.loads(meta["schemaString"])
    for f in schema["fields"]:
        if f["name"] == "note":
            f["type"] = "integer"
    meta["schemaString"] = json.dumps(schema)
    write_commit(table, 6, [commit_info("CHANGE COLUMN"), {"metaData": meta}])
    fails(*changes(table, 3, 6), code=D.EXIT_INVALID, facts=[6])


# ---------------------------------------------------------------------------------------------
# Missing and corrupt files


def test_missing_commit_inside_range(table):
    D.commit_files(table)[4].unlink()
    fails(*changes(table, 2, 5), code=D.EXIT_NOT_FOUND, facts=[4])


def test_range_before_earliest_retained_commit(base, table):
    """Log cleanup left a checkpoint at v3 and commits 3..5: v3 and later stay readable, [0, 5] not
    (a checkpoint cannot stand in for a commit, delta.md 4.1)."""
    for v in (0, 1, 2):
        D.commit_files(table)[v].unlink()
    fails(*changes(table, 0, 5), code=D.EXIT_NOT_FOUND, facts=[0])
    done = D.run_lakesync(*changes(table, 4, 5))
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == D.deltalake_cdf(base, 4, 5).num_rows > 0


def test_missing_data_file_of_late_commit(table):
    """Rows of v0..v4 come first; the file of v5 is gone: nothing may be printed."""
    victim = file_of(table, 5, "add")
    victim.unlink()
    fails(*changes(table, 0, 5), code=D.EXIT_NOT_FOUND, facts=[victim.name])


def test_missing_cdc_file(table):
    victim = file_of(table, 3, "cdc")
    victim.unlink()
    fails(*changes(table, 0, 5), code=D.EXIT_NOT_FOUND, facts=[victim.name])


def test_truncated_data_file(table):
    victim = file_of(table, 4, "add")
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    fails(*changes(table, 0, 5), code=D.EXIT_CORRUPT, facts=[victim.name])
    fails("scan", "--delta", table, "--format", "jsonl", code=D.EXIT_CORRUPT, facts=[victim.name])


def test_corrupt_cdc_file(table):
    victim = file_of(table, 2, "cdc")
    victim.write_bytes(b"PAR1" + b"\0" * 64 + b"PAR1")
    fails(*changes(table, 0, 5), code=D.EXIT_CORRUPT, facts=[victim.name])


def test_garbage_commit_line(table):
    path = D.commit_files(table)[4]
    path.write_text(path.read_text() + "{this is not json\n")
    fails(*changes(table, 0, 5), code=D.EXIT_CORRUPT, facts=[4])


def test_corrupt_checkpoint(table):
    [cp] = list((table / "_delta_log").glob("*.checkpoint.parquet"))
    cp.write_bytes(cp.read_bytes()[:100])
    fails("scan", "--delta", table, "--format", "jsonl", code=D.EXIT_CORRUPT, facts=[cp.name])
    fails(*changes(table, 4, 5), code=D.EXIT_CORRUPT, facts=[cp.name])


# ---------------------------------------------------------------------------------------------
# Deletion vectors (corpus tables: deltalake cannot write DVs)


@pytest.fixture
def dv_table(corpus, tmp_path) -> Path:
    copy = tmp_path / "dv"
    shutil.copytree(corpus["cdf-table-with-dv"], copy)
    return copy


def test_missing_deletion_vector_file(dv_table):
    [dv] = list(dv_table.glob("deletion_vector_*.bin"))
    dv.unlink()
    fails(*changes(dv_table, 0, 6), code=D.EXIT_NOT_FOUND, facts=[dv.name])
    fails("scan", "--delta", dv_table, "--version", 1, "--format", "jsonl", code=D.EXIT_NOT_FOUND, facts=[dv.name])


def test_deletion_vector_with_bad_checksum(dv_table):
    [dv] = list(dv_table.glob("deletion_vector_*.bin"))
    data = bytearray(dv.read_bytes())
    data[-1] ^= 0xFF  # the CRC-32 of the only DV in the file (delta.md 6.2)
    dv.write_bytes(bytes(data))
    fails(*changes(dv_table, 0, 6), code=D.EXIT_CORRUPT, facts=[dv.name])


# ---------------------------------------------------------------------------------------------
# Reader features


def _protocol(features: list[str]) -> dict:
    return {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": features,
                         "writerFeatures": features + ["changeDataFeed"]}}


def test_unknown_reader_feature_inside_range(table):
    write_commit(table, 6, [commit_info("UPGRADE PROTOCOL"), _protocol(["someFutureFeature"])])
    fails(*changes(table, 3, 6), code=D.EXIT_FAILURE, facts=["someFutureFeature"])
    fails("scan", "--delta", table, "--format", "jsonl", code=D.EXIT_FAILURE, facts=["someFutureFeature"])
    # before the upgrade the table still reads
    assert D.run_lakesync(*changes(table, 3, 5)).returncode == 0


def test_catalog_managed_table_refused(table):
    write_commit(table, 6, [commit_info("UPGRADE PROTOCOL"), _protocol(["catalogManaged"])])
    fails(*changes(table, 6, 6), code=D.EXIT_FAILURE, facts=["catalogManaged"])


def test_corrupt_pages_behind_a_valid_footer(table):
    """The footer still parses, so the damage shows only while decoding the rows of the last
    commit, after v0..v4 produced theirs. Nothing may have been printed (the contract forbids a
    partial feed on standard output)."""
    import pyarrow.parquet as pq

    victim = file_of(table, 5, "add")
    meta = pq.ParquetFile(victim).metadata
    col = meta.row_group(0).column(0)
    start = col.data_page_offset
    data = bytearray(victim.read_bytes())
    for i in range(start + 8, start + col.total_compressed_size - 2):
        data[i] = 0xA5  # page payload garbage; page header and footer intact
    victim.write_bytes(bytes(data))
    pq.ParquetFile(victim).metadata  # noqa: B018 (the footer still reads)
    fails(*changes(table, 0, 5), code=D.EXIT_CORRUPT, facts=[victim.name])
