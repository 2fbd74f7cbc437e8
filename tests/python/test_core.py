"""The Python package over the C++ core: scans, change streams, apply and run give what the CLI and
the independent readers (pyiceberg, deltalake) give; Arrow streams cross without pyarrow's C++ layer;
errors are the exception of their kind with the CLI's message."""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakesync_testing import PACKAGE, REPO

import lakesync  # noqa: E402  (on sys.path through lakesync_testing)

sys.path.insert(0, str(REPO / "tests" / "delta"))

COLUMNS = ["id", "name", "amount"]
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("amount", pa.float64())])


def change_batches(seed: int, versions: int, keys: int = 60):
    """A random CDC stream in Delta's vocabulary with its expected final state (computed here)."""
    rng = random.Random(seed)
    state: dict[int, tuple] = {}
    rows = []
    for v in range(versions):
        touched = set()
        for _ in range(rng.randint(5, 40)):
            k = rng.randrange(keys)
            if k in touched:
                continue
            touched.add(k)
            new = (k, f"n{v}-{k}", float(rng.randint(0, 1000)))
            if k not in state:
                rows.append((*new, "insert", v))
                state[k] = new
            elif rng.random() < 0.5:
                rows.append((*state[k], "update_preimage", v))
                rows.append((*new, "update_postimage", v))
                state[k] = new
            else:
                rows.append((*state[k], "delete", v))
                del state[k]
    rng.shuffle(rows)  # order must not matter: the sequence column orders a key's changes
    cols = list(zip(*rows))
    table = pa.table(
        {"id": pa.array(cols[0], pa.int64()), "name": cols[1], "amount": pa.array(cols[2], pa.float64()),
         "_change_type": cols[3], "_commit_version": pa.array(cols[4], pa.int64())})
    return table, sorted(state.values())


SINK = {"equality_columns": ["id"], "change_type_column": "_change_type",
        "sequence_number_column": "_commit_version", "table_properties": {"format-version": "3"},
        "partition_fields": ["bucket(id, 4)"]}


def test_apply_gives_the_table_the_cli_gives_and_pyiceberg_reads(warehouse, tmp_path):
    changes, expected = change_batches(1, 8)
    # Two applies each (split by version), so the second deletes through deletion vectors of the
    # first one's files.
    early = changes.filter(pa.compute.less(changes["_commit_version"], 4))
    late = changes.filter(pa.compute.greater_equal(changes["_commit_version"], 4))
    catalog = lakesync.Catalog(warehouse.config)
    for part in (early, late):
        summary = catalog.apply("db.py", part, **SINK)
        assert summary["tables"][0]["table"] == "db.py"
        assert summary["changes"]["total"] == part.num_rows
        assert set(summary) == {"tables", "changes", "dead_letters", "dead_letter_location", "duration_seconds"}
    for i, part in enumerate((early, late)):
        path = tmp_path / f"part{i}.parquet"
        pq.write_table(part, path)
        p = warehouse.cli("apply", "--table", "db.cli", "--equality-columns", "id", "--change-type-column",
                          "_change_type", "--sequence-number-column", "_commit_version", "--table-properties",
                          "format-version=3", "--partition-fields", "bucket(id, 4)", "--json", "--changes", path)
        # The CLI adds the write mode it chose (apply --help: the default depends on the input).
        assert set(json.loads(p.stdout)) == set(summary) | {"mode"}
    assert warehouse.rows("db.py", COLUMNS) == expected
    assert warehouse.rows("db.cli", COLUMNS) == expected
    assert warehouse.cli_rows("db.py", COLUMNS) == expected


def test_scan_reads_what_pyiceberg_reads(warehouse):
    changes, expected = change_batches(2, 5)
    catalog = lakesync.Catalog(warehouse.config)
    catalog.apply("db.t", changes, **SINK)
    reader = catalog.scan("db.t")
    assert isinstance(reader, pa.RecordBatchReader)
    got = reader.read_all()
    assert sorted(tuple(r[c] for c in COLUMNS) for r in got.to_pylist()) == expected
    assert warehouse.rows("db.t", COLUMNS) == expected
    # Filter and projection as `lakesync scan --filter --select`.
    some = catalog.scan("db.t", filter="id < 30", columns=["id", "name"]).read_all()
    assert some.column_names == ["id", "name"]
    assert sorted(some.to_pylist(), key=lambda r: r["id"]) == [
        {"id": r[0], "name": r[1]} for r in expected if r[0] < 30]
    # Time travel: the empty first snapshot is not there, but the current one is.
    snapshot = warehouse.pyiceberg().load_table("db.t").current_snapshot().snapshot_id
    assert catalog.scan("db.t", snapshot_id=snapshot).read_all().num_rows == len(expected)
    assert catalog.list_tables("db") == ["db.t"]


def test_writers_take_any_arrow_stream(warehouse):
    """pyarrow tables, batches and readers, a reader fed by a Python generator (whose batches are
    produced while the core runs without the GIL), and DuckDB results."""
    duckdb = pytest.importorskip("duckdb")
    changes, expected = change_batches(3, 1)
    catalog = lakesync.Catalog(warehouse.config)
    sink = {"equality_columns": ["id"], "change_type_column": "_change_type",
            "sequence_number_column": "_commit_version"}
    produced = []

    def generate():
        for batch in changes.to_batches(max_chunksize=7):
            produced.append(threading.get_ident())
            yield batch

    sources = {
        "table": changes,
        "batch": changes.combine_chunks().to_batches()[0],
        "reader": pa.RecordBatchReader.from_batches(changes.schema, changes.to_batches(max_chunksize=5)),
        "generator": pa.RecordBatchReader.from_batches(changes.schema, generate()),
        "duckdb": duckdb.sql("SELECT * FROM changes"),
    }
    for name, source in sources.items():
        catalog.apply(f"db.{name}", source, **sink)
        assert warehouse.rows(f"db.{name}", COLUMNS) == expected, name
    assert produced  # the generator really was pulled by the core


def test_a_stream_pulled_by_the_core_does_not_block_other_python_threads(warehouse):
    """apply() releases the GIL: a slow Python generator feeding it and another Python thread both
    make progress, and the call returns (a deadlock would hang until the deadline)."""
    changes, expected = change_batches(4, 3)
    catalog = lakesync.Catalog(warehouse.config)
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.001)

    def generate():
        for batch in changes.to_batches(max_chunksize=3):
            before = len(ticks)
            # Wait (bounded) until the other thread ran: impossible if the core held the GIL.
            deadline = threading.Event()
            for _ in range(10_000):
                if len(ticks) > before:
                    break
                deadline.wait(0.001)
            yield batch

    t = threading.Thread(target=ticker)
    t.start()
    result = {}
    worker = threading.Thread(target=lambda: result.update(catalog.apply(
        "db.gil", pa.RecordBatchReader.from_batches(changes.schema, generate()), **SINK)))
    worker.start()
    worker.join(timeout=120)
    stop.set()
    t.join()
    assert not worker.is_alive(), "apply() did not return"
    assert result["changes"]["total"] == changes.num_rows
    assert warehouse.rows("db.gil", COLUMNS) == expected


def test_delta_changes_are_deltalakes_change_data_feed(tmp_path):
    from deltalake import DeltaTable
    from delta_tables import build_table

    path = tmp_path / "delta"
    build_table(path, seed=5, versions=6, partitioned=True)
    reader = lakesync.delta_changes(path, start_version=1, end_version=5)
    assert isinstance(reader, pa.RecordBatchReader)
    got = reader.read_all()
    assert got.column_names[-3:] == ["_change_type", "_commit_version", "_commit_timestamp"]
    want = pa.table(DeltaTable(str(path)).load_cdf(starting_version=1, ending_version=5).read_all())
    # deltalake's _commit_timestamp is the writer's clock, lakesync's Spark's rule (docs/delta.md).
    columns = [c for c in got.column_names if c != "_commit_timestamp"]

    def key(rows):
        return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows.select(columns).to_pylist())

    assert key(got) == key(want.select(columns))
    only = lakesync.delta_changes(path, start_version=1, columns=["_commit_version"]).read_all()
    assert only.column_names[-1] == "_commit_version" and "_change_type" not in only.column_names


def test_iceberg_changes_are_the_clis_changes(warehouse, tmp_path):
    changes, _ = change_batches(6, 4)
    catalog = lakesync.Catalog(warehouse.config)
    for v in range(4):
        part = changes.filter(pa.compute.equal(changes["_commit_version"], v))
        catalog.apply("db.src", part, **SINK)
    got = lakesync.iceberg_changes(catalog, "db.src").read_all()
    out = tmp_path / "changes.parquet"
    warehouse.cli("changes", "--source", "iceberg", "--table", "db.src", "--format", "parquet", "--output", out)
    want = pq.read_table(out)
    assert got.column_names == want.column_names
    drop = ["_change_ordinal"]
    rows = lambda t: sorted(json.dumps(r, sort_keys=True, default=str)  # noqa: E731
                            for r in t.drop_columns(drop).to_pylist())
    assert rows(got) == rows(want)
    # Resuming after a position reads only the later snapshots.
    seqs = sorted(set(got["_commit_snapshot_sequence_number"].to_pylist()))
    later = lakesync.iceberg_changes(catalog, "db.src", after_sequence_number=seqs[1]).read_all()
    assert set(later["_commit_snapshot_sequence_number"].to_pylist()) == set(seqs[2:])
    keys = lakesync.iceberg_changes(catalog, "db.src", columns=["_change_type"]).read_all()
    assert keys.column_names == ["id", "name", "amount", "_change_type"]


def test_run_is_lakesync_run_once_and_shares_its_progress(warehouse, tmp_path):
    from deltalake import DeltaTable
    from delta_tables import build_table

    delta = tmp_path / "delta"
    build_table(delta, seed=8, versions=5, partitioned=False)
    job = tmp_path / "job.yaml"
    job.write_text(json.dumps({
        "name": "py-job",
        "source": {"type": "delta_lake_cdc", "table": str(delta), "start_version": 0},
        "sink": {"table": "db.job", "equality_columns": ["id"], "table_properties": {"format-version": "3"}},
    }))
    catalog = lakesync.Catalog(warehouse.config)
    summary = lakesync.run(job, catalog)
    assert summary["status"] == "committed" and summary["range"] == {"from": 0, "through": 4}
    cli = warehouse.cli("run", job).stdout.strip().splitlines()[-1]
    assert set(json.loads(cli)) <= set(summary) | {"message"}
    assert json.loads(cli)["status"] == "nothing-new"  # the CLI sees the progress Python committed
    cols = ["id", "note"]
    want = sorted(tuple(r[c] for c in cols) for r in DeltaTable(str(delta)).to_pyarrow_table().to_pylist())
    assert warehouse.rows("db.job", cols) == want
    assert lakesync.run(job, catalog)["status"] == "nothing-new"


def cli_error(warehouse, *args) -> str:
    p = warehouse.cli(*args, check=False)
    assert p.returncode != 0
    line = [ln for ln in p.stderr.splitlines() if "error: " in ln][-1]
    return line.split("error: ", 1)[1]


def test_errors_are_exceptions_of_their_kind_with_the_clis_message(warehouse, tmp_path):
    catalog = lakesync.Catalog(warehouse.config)
    with pytest.raises(lakesync.NotFoundError) as e:
        catalog.scan("db.missing")
    assert str(e.value) == cli_error(warehouse, "scan", "--table", "db.missing")
    assert isinstance(e.value, lakesync.LakesyncError) and isinstance(e.value, LookupError)

    with pytest.raises(lakesync.NotFoundError) as e:
        lakesync.delta_changes(tmp_path / "nowhere", start_version=0)
    assert str(e.value) == cli_error(warehouse, "changes", "--source", "delta", "--table", tmp_path / "nowhere",
                                     "--start-version", "0")

    changes, _ = change_batches(9, 1)
    with pytest.raises(lakesync.InvalidArgumentError) as e:
        catalog.apply("db.t", changes, equality_colums=["id"])
    assert "equality_colums" in str(e.value) and isinstance(e.value, ValueError)
    from deltalake import write_deltalake

    write_deltalake(str(tmp_path / "d"), pa.table({"id": [1]}), configuration={"delta.enableChangeDataFeed": "true"})
    # No start bound: the core's own message (the CLI checks its flags first and names them).
    with pytest.raises(lakesync.InvalidArgumentError, match="start version or a start timestamp"):
        lakesync.delta_changes(tmp_path / "d")
    with pytest.raises(lakesync.InvalidArgumentError, match="unknown option 'start'"):
        lakesync._core.delta_changes(str(tmp_path / "d"), json.dumps({"start": 0}))
    with pytest.raises(TypeError):
        catalog.apply("db.t", [1, 2, 3], equality_columns=["id"])
    with pytest.raises(lakesync.InvalidArgumentError):
        lakesync.Catalog({"catalog_properties": {"type": "sql"}})


def test_stubs_name_what_the_extension_defines():
    stub = ast.parse((PACKAGE / "lakesync" / "_core.pyi").read_text())
    names = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    names |= {t.id for n in stub.body if isinstance(n, ast.AnnAssign) for t in [n.target]}
    runtime = {n for n in dir(lakesync._core) if not n.startswith("_")} | {"__version__"}
    assert names == runtime
    for cls in (n for n in stub.body if isinstance(n, ast.ClassDef)):
        stubbed = {m.name for m in cls.body if isinstance(m, ast.FunctionDef)} - {"__init__"}
        actual = {m for m in dir(getattr(lakesync._core, cls.name)) if not m.startswith("_")}
        assert stubbed == actual, cls.name


def test_the_package_imports_in_a_fresh_interpreter():
    p = subprocess.run([sys.executable, "-c", "import lakesync, pyarrow; print(lakesync.__version__)"],
                       env={"PYTHONPATH": str(PACKAGE), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == lakesync.__version__


def test_split_by_shard_puts_each_key_in_one_shard_and_loses_no_row():
    """The Beam transforms shard changes by key through this call: every row lands in exactly one
    shard, all rows of a key in the same one, and the split does not depend on batch boundaries."""
    from lakesync import _core

    rng = random.Random(7)
    ids = [rng.randrange(50) for _ in range(400)]
    table = pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in range(400)]})

    def split(batch_rows: int):
        reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=batch_rows))
        out = {}
        for shard, capsule in _core.split_by_shard(reader.__arrow_c_stream__(), ["id"], 4):
            part = pa.RecordBatchReader._import_from_c_capsule(capsule).read_all()
            assert 0 <= shard < 4 and shard not in out
            out[shard] = part
        return out

    shards = split(64)
    assert sum(t.num_rows for t in shards.values()) == table.num_rows
    assert sorted(sum((t.column("name").to_pylist() for t in shards.values()), [])) == sorted(
        table.column("name").to_pylist())
    owner = {}
    for shard, t in shards.items():
        for key in t.column("id").to_pylist():
            assert owner.setdefault(key, shard) == shard, f"key {key} in shards {owner[key]} and {shard}"
    assert {s: sorted(t.column("name").to_pylist()) for s, t in split(400).items()} == {
        s: sorted(t.column("name").to_pylist()) for s, t in shards.items()}


def test_a_polling_source_sees_new_commits_after_asking_for_the_latest(tmp_path):
    """The questions lakesync.beam's unbounded reads ask each poll (python/lakesync/beam): the newest
    commit (which looks at the source again), the first, the one after, and the end bound."""
    from deltalake import DeltaTable
    from delta_tables import build_table

    sys.path.insert(0, str(REPO / "tests" / "beam"))
    from beam_testing import extend_delta  # random deltalake commits, shared with the Beam suite

    path = tmp_path / "delta"
    build_table(path, seed=3, versions=2, partitioned=False)
    options = {"table": str(path), "start_version": 0, "end_version": 5, "streaming": True, "poll_interval_seconds": 2}
    source = lakesync._core.Source("delta_lake_cdc", json.dumps(options), None)
    assert (source.latest(), source.first(), source.end()) == (1, 0, 5)
    assert source.next_after(0) == 1 and source.next_after(1) is None
    assert source.poll_interval_seconds == 2
    assert source.commit_timestamp_ms(1) is not None
    extend_delta(path, seed=4, versions=1)
    assert DeltaTable(str(path)).version() == 2
    assert source.latest() == 2 and source.next_after(1) == 2
    with pytest.raises(lakesync.LakesyncError, match="poll_interval_seconds"):
        lakesync._core.Source("delta_lake_cdc", json.dumps({**options, "streaming": False}), None)
