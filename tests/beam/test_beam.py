"""lakesync's Beam transforms (lakesync.beam) on Beam's DirectRunner, in the Beam venv (apache-beam
2.77.0, pyarrow 25, lakesync pip-installed there). Differential: the same random change workloads
through `lakesync run`, through `lakesync.Catalog.apply` from Python, and through Beam with 1, 4 and
16 shards give identical tables, which pyiceberg and `lakesync scan` read like the source's own
snapshot read by deltalake or pyiceberg; a worker failure injected mid-bundle leaves no duplicates;
a job moves between the CLI and Beam and resumes exactly."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from beam_testing import BEAM_PYTHON, delta_job, delta_rows, extend_delta, iceberg_rows, sorted_rows
from delta_tables import SCHEMA, build_table
from lakesync_testing import Warehouse

import lakesync  # noqa: E402  (the build's package, on sys.path through lakesync_testing)

COLUMNS = SCHEMA.names


def test_pip_installed_package_imports_against_pyarrow_25(beam, tmp_path):
    """The Beam venv is a clean venv where `pip install .` built lakesync against pyarrow 25; the
    wheel requires that pyarrow major, and the package works there."""
    assert beam.about["pyarrow"].startswith("25.")
    assert beam.about["arrow_built"].startswith("25.")
    assert "beam-venv" in beam.about["module"]
    script = (
        "import importlib.metadata as m, json, pyarrow as pa, lakesync\n"
        "reqs = [r for r in m.requires('lakesync') if r.startswith('pyarrow')]\n"
        "c = lakesync.Catalog(json.load(open('catalog.yaml')))\n"
        "t = pa.table({'id': pa.array([1, 2], pa.int64()), 'v': ['a', 'b']})\n"
        "c.apply('db.t', t)\n"
        "print(json.dumps({'reqs': reqs, 'rows': c.scan('db.t').read_all().num_rows}))\n"
    )
    wh = Warehouse(tmp_path / "wh")
    p = subprocess.run([str(BEAM_PYTHON), "-c", script], cwd=wh.root, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["rows"] == 2
    assert any("<26" in r for r in out["reqs"]), out["reqs"]


def test_the_wheel_s_lakesync_command_runs_on_the_venv_s_pyarrow(beam, tmp_path):
    """`pip install` (and so `pipx install` of the wheel) gives a `lakesync` command: the same C++ tool,
    loading Arrow from the pyarrow package beside it (25 here, not the checkout's 26), run with a
    clean environment; it reads a table the Python API wrote, like pyiceberg does."""
    exe = BEAM_PYTHON.parent / "lakesync"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, env=env, cwd=tmp_path,
                             timeout=60)
    assert version.returncode == 0, version.stderr
    pool = "memory pool: jemalloc, freed pages kept 10000 ms"
    assert f"; Arrow {beam.about['pyarrow']}; {pool})" in version.stdout, version.stdout
    binary = BEAM_PYTHON.parents[1] / "lib"
    (site,) = binary.glob("python3*/site-packages")
    ldd = subprocess.run(["ldd", str(site / "lakesync" / "bin" / "lakesync")], capture_output=True, text=True,
                         check=True).stdout
    loaded = {line.split()[0]: os.path.realpath(line.split()[2]) for line in ldd.splitlines() if " => /" in line}
    arrow = next(v for k, v in loaded.items() if k.startswith("libarrow.so."))
    assert arrow.startswith(f"{site.resolve()}/pyarrow/"), loaded
    wh = Warehouse(tmp_path / "wh")
    lakesync.Catalog(wh.config).apply("db.t", pa.table({"id": pa.array([3, 1, 2], pa.int64()), "v": ["c", "a", "b"]}))
    scan = subprocess.run([str(exe), "--catalog-config", str(wh.config_file), "scan", "--table", "db.t",
                           "--format", "csv"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert scan.returncode == 0, scan.stderr
    assert sorted(scan.stdout.splitlines()[1:]) == ["1,a", "2,b", "3,c"], scan.stdout
    assert sorted(wh.rows("db.t", ["id", "v"])) == [(1, "a"), (2, "b"), (3, "c")]


def python_apply(warehouse: Warehouse, delta: Path, start: int, end: int, sink_id: str):
    """The Python API path: lakesync.delta_changes into Catalog.apply, position recorded."""
    catalog = lakesync.Catalog(warehouse.config)
    changes = lakesync.delta_changes(delta, start_version=start, end_version=end,
                                     columns=["_change_type", "_commit_version"])
    return catalog.apply("db.orders", changes, equality_columns=["id"], partition_fields=["bucket(id, 4)"],
                         table_properties={"format-version": "3"}, change_type_column="_change_type",
                         sequence_number_column="_commit_version", sink_id=sink_id, source_position=end)


def test_delta_workload_is_the_same_through_cli_python_and_beam_with_any_shard_count(beam, tmp_path):
    delta = tmp_path / "delta"
    build_table(delta, seed=17, versions=6, partitioned=True)
    cli_wh, py_wh = Warehouse(tmp_path / "cli"), Warehouse(tmp_path / "py")
    beam_whs = {n: Warehouse(tmp_path / f"beam{n}") for n in (1, 4, 16)}
    # An explicit sink id, so the Python API path (which takes it as an argument) records its progress
    # under the same id as the job (whose default derives from the source's identity and the target).
    job = delta_job(tmp_path / "job.yaml", delta, sink_id="orders-sync")

    def run_all(start: int, end: int):
        cli_wh.cli("run", job)
        python_apply(py_wh, delta, start, end, "orders-sync")
        for n, wh in beam_whs.items():
            summary = beam.sync(job, wh, n, tmp_path)
            assert summary["status"] == "committed", summary
            assert summary["range"] == {"from": start, "through": end}

    run_all(0, 5)
    # More versions: updates and deletes of rows in files the first run wrote (deletion vectors).
    extend_delta(delta, seed=18, versions=5)
    run_all(6, 10)
    want = delta_rows(delta, COLUMNS)
    assert iceberg_rows(cli_wh, "db.orders", COLUMNS) == want
    assert iceberg_rows(py_wh, "db.orders", COLUMNS) == want
    for n, wh in beam_whs.items():
        assert iceberg_rows(wh, "db.orders", COLUMNS) == want, f"{n} shards"
    # `lakesync scan` reads a Beam-written table like pyiceberg does.
    ids = sorted(json.loads(line)["id"] for line in
                 beam_whs[16].cli("scan", "--table", "db.orders", "--format", "jsonl").stdout.splitlines())
    assert ids == sorted(r[0] for r in want)
    # Deletes became deletion vectors on the Beam-written table, one per data file per snapshot.
    files = beam_whs[4].pyiceberg().load_table("db.orders").inspect.delete_files()
    assert files.num_rows > 0 and set(files["file_format"].to_pylist()) == {"PUFFIN"}
    # Every path recorded the same progress: each sees nothing new.
    assert json.loads(cli_wh.cli("status", job).stdout)["committed_position"] == 10
    for wh in (py_wh, *beam_whs.values()):
        assert json.loads(wh.cli("status", job).stdout)["committed_position"] == 10


def beam_temp_folders(where: Path) -> set[str]:
    return {p.name for p in where.iterdir() if p.name.startswith(("beam-temp", "beam-pipeline-temp"))}


def test_a_job_moves_between_the_cli_and_beam_and_resumes_exactly(beam, tmp_path):
    system_temp = Path(tempfile.gettempdir())
    before = beam_temp_folders(system_temp)
    delta = tmp_path / "delta"
    build_table(delta, seed=23, versions=4, partitioned=False)
    wh = Warehouse(tmp_path / "wh")
    job = delta_job(tmp_path / "job.yaml", delta)
    first = json.loads(wh.cli("run", job).stdout.strip().splitlines()[-1])
    assert first["range"] == {"from": 0, "through": 3}
    extend_delta(delta, seed=24, versions=3)
    summary = beam.sync(job, wh, 4, tmp_path)
    assert summary["range"] == {"from": 4, "through": 6} and summary["committed_before"] == 3
    again = beam.sync(job, wh, 4, tmp_path)
    assert again["status"] == "nothing-new"
    extend_delta(delta, seed=25, versions=2)
    last = json.loads(wh.cli("run", job).stdout.strip().splitlines()[-1])
    assert last["range"] == {"from": 7, "through": 8}
    assert iceberg_rows(wh, "db.orders", COLUMNS) == delta_rows(delta, COLUMNS)
    # Beam's own temporary folders (it does not remove them) went to the test's folder, not /tmp.
    assert beam_temp_folders(tmp_path / "beam-tmpdir"), "the driver's Beam made no temporary folder in TMPDIR"
    assert beam_temp_folders(system_temp) - before == set()


def test_a_worker_failure_mid_bundle_is_retried_without_duplicates(beam, tmp_path):
    """Beam's bundle-based DirectRunner retries failed bundles: a shard that wrote its files and then
    died is run again (its first files stay unreferenced), and a committer that died after its commit
    landed recognises its own commit on the retry. No row is duplicated or lost."""
    delta = tmp_path / "delta"
    build_table(delta, seed=31, versions=5, partitioned=True)
    wh, ref = Warehouse(tmp_path / "wh"), Warehouse(tmp_path / "ref")
    job = delta_job(tmp_path / "job.yaml", delta)
    ref.cli("run", job)
    first = beam.sync(job, wh, 4, tmp_path, runner="bundle", fail_stage_once=tmp_path / "m1",
                      fail_commit_once=tmp_path / "m2")
    assert first["status"] == "committed"
    assert (tmp_path / "m1" / "stage").exists() and (tmp_path / "m2" / "commit").exists()  # both failures happened
    extend_delta(delta, seed=32, versions=3)
    ref.cli("run", job)
    second = beam.sync(job, wh, 4, tmp_path, runner="bundle", fail_stage_once=tmp_path / "m3")
    assert second["status"] == "committed" and second["range"]["from"] == 5
    want = delta_rows(delta, COLUMNS)
    assert iceberg_rows(wh, "db.orders", COLUMNS) == want
    assert iceberg_rows(ref, "db.orders", COLUMNS) == want
    # One snapshot per run, as the CLI makes.
    snapshots = wh.pyiceberg().load_table("db.orders").snapshots()
    assert len(snapshots) == len(ref.pyiceberg().load_table("db.orders").snapshots())


def test_iceberg_changelog_workload_is_the_same_through_cli_python_and_beam(beam, tmp_path):
    """Source: an Iceberg table pyiceberg writes (appends, deletes, upserts: copy-on-write rewrites);
    the job reads its changelog into another catalog."""
    src = Warehouse(tmp_path / "src")
    cat = src.pyiceberg()
    cat.create_namespace("src")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("qty", pa.int64())])
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    ice_schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType()),
                        NestedField(3, "qty", LongType()), identifier_field_ids=[1])
    table = cat.create_table("src.items", ice_schema, properties={"format-version": "2"})

    def rows(ids, tag):
        return pa.table({"id": ids, "name": [f"{tag}-{i}" for i in ids], "qty": [i * 3 for i in ids]}, schema=schema)

    table.append(rows(list(range(0, 40)), "a"))
    table.delete("id < 5")
    table.upsert(rows(list(range(30, 50)), "b"))
    table.append(rows(list(range(50, 60)), "c"))
    table.delete("id >= 55")

    cols = ["id", "name", "qty"]
    job = tmp_path / "job.yaml"
    job.write_text(json.dumps({
        "name": "items-sync",
        "source": {"type": "iceberg_cdc", "table": "src.items", "catalog_name": "lakesync",
                   "catalog_properties": src.config["catalog_properties"]},
        "sink": {"table": "db.items", "equality_columns": ["id"], "table_properties": {"format-version": "3"}},
    }))
    cli_wh, py_wh, beam_wh = Warehouse(tmp_path / "cli"), Warehouse(tmp_path / "py"), Warehouse(tmp_path / "beam")
    cli_wh.cli("run", job)
    summary = beam.sync(job, beam_wh, 4, tmp_path)
    assert summary["status"] == "committed"
    source = lakesync.Catalog(src.config)
    changes = lakesync.iceberg_changes(source, "src.items", columns=["_change_type", "_commit_snapshot_sequence_number"])
    lakesync.Catalog(py_wh.config).apply("db.items", changes, equality_columns=["id"],
                                         change_type_column="_change_type",
                                         sequence_number_column="_commit_snapshot_sequence_number")
    want = sorted_rows(src.pyiceberg().load_table("src.items").scan().to_arrow().to_pylist(), cols)
    for wh in (cli_wh, py_wh, beam_wh):
        assert iceberg_rows(wh, "db.items", cols) == want, wh.root.name


def test_read_and_write_transforms(beam, tmp_path):
    delta = tmp_path / "delta"
    build_table(delta, seed=41, versions=5, partitioned=False)
    out = tmp_path / "beam.parquet"
    beam.run("read-delta", delta, 1, 4, out, tmp=tmp_path)
    got = pq.read_table(out)
    want = lakesync.delta_changes(delta, start_version=1, end_version=4,
                                  columns=["_change_type", "_commit_version"]).read_all()
    cols = want.column_names
    assert sorted_rows(got.select(cols).to_pylist(), cols) == sorted_rows(want.to_pylist(), cols)

    # WriteIcebergChanges: the same changes as Catalog.apply, from batches spread over workers.
    changes = tmp_path / "changes.parquet"
    pq.write_table(lakesync.delta_changes(delta, start_version=0, columns=["_change_type", "_commit_version"])
                   .read_all(), changes)
    opts = {"equality_columns": ["id"], "change_type_column": "_change_type",
            "sequence_number_column": "_commit_version", "table_properties": {"format-version": "3"}}
    beam_wh, py_wh = Warehouse(tmp_path / "beam"), Warehouse(tmp_path / "py")
    summary = beam.run("write", "db.w", beam_wh.config_file, changes, json.dumps(opts), "--shards", 3, tmp=tmp_path)
    assert summary["tables"][0]["table"] == "db.w" and summary["tables"][0]["snapshot_id"]
    lakesync.Catalog(py_wh.config).apply("db.w", pq.read_table(changes), **opts)
    assert iceberg_rows(beam_wh, "db.w", COLUMNS) == iceberg_rows(py_wh, "db.w", COLUMNS) == delta_rows(delta, COLUMNS)
