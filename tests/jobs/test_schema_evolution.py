"""Schema evolution in jobs (issue 16, `schema_evolution: additive`, the default). The sources are
changed by independent writers (deltalake: `schema_mode="merge"` adds a column, an overwrite with a
new schema widens two; pyiceberg: `update_schema()` adds, renames, widens); the target must end equal
to the source row for row (deltalake's and pyiceberg's readers) with the field ids the Iceberg spec
requires. An incompatible change stops the job with what changed, leaves the target as it was, and a
rerun after fixing the target resumes exactly."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import yaml

# The Delta suites' table helpers; appended, so that no module of this folder is shadowed.
sys.path.append(str(Path(__file__).resolve().parents[1] / "delta"))
from delta_tables import add_column_then_widen, create_small_cdf_table, rename_column  # noqa: E402

SHARED = Path(os.environ.get("LAKESYNC_SHARED_DIR", "/work/shared"))


def by_row(r):
    return json.dumps(r, sort_keys=True, default=str)


def delta_rows(path):
    from deltalake import DeltaTable
    return sorted(DeltaTable(str(path)).to_pyarrow_table().to_pylist(), key=by_row)


def iceberg_table(env, name="db.t"):
    return env.catalog().load_table(name)


def iceberg_rows(env, name="db.t"):
    return sorted(iceberg_table(env, name).scan().to_arrow().to_pylist(), key=by_row)


def write_job(env, source: dict, **top) -> Path:
    job = {"source": source, "sink": {"table": "db.t", "mode": "merge-on-read", "equality_columns": ["id"]}, **top}
    path = env.root / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    return path


def delta_job(env, path, **top):
    return write_job(env, {"type": "delta_lake_cdc", "table": str(path), "start_version": 0, "initial_snapshot": True},
                     **top)


def delta_create(path):
    create_small_cdf_table(path)


def test_delta_source_adds_a_column_and_widens_two_mid_range(env):
    src = env.root / "d"
    delta_create(src)
    job = delta_job(env, src)
    p, runs = env.run_job(job, "--once")
    assert runs[0]["status"] == "committed"
    assert iceberg_table(env).metadata.last_column_id == 3

    # One range with both changes in its middle (delta_tables.add_column_then_widen: v1 adds `note`,
    # v2 updates a row, v3 widens qty and price, v4 appends a value only the wider type holds).
    add_column_then_widen(src)
    p, runs = env.run_job(job, "--once")
    assert [r["status"] for r in runs] == ["committed"], p.stdout
    assert runs[-1]["range"] == {"from": 1, "through": 4}

    assert iceberg_rows(env) == delta_rows(src)
    assert [r for r in iceberg_rows(env) if r["id"] == 5] == [{"id": 5, "qty": 2**40, "price": 5.25, "note": "five"}]
    t = iceberg_table(env)
    ids = {f.name: (f.field_id, str(f.field_type), f.required) for f in t.schema().fields}
    assert ids == {"id": (1, "long", True), "qty": (2, "long", False), "price": (3, "double", False),
                   "note": (4, "string", False)}
    assert t.metadata.last_column_id == 4
    # The range was applied in two commits, split at the schema change (v3): each names its schema,
    # and the rows before the widening were committed with the narrower types.
    snaps = t.metadata.snapshots
    sink_id = runs[-1]["sink_id"]
    positions = [s.summary[f"lakesync.source-position.{sink_id}"] for s in snaps]
    assert positions == ["0", "2", "4"]
    schemas = {s.schema_id: s for s in t.metadata.schemas}
    assert [str(schemas[s.schema_id].find_field("qty").field_type) for s in snaps] == ["int", "int", "long"]
    assert [schemas[s.schema_id].find_field("note", case_sensitive=True) is not None
            for s in snaps[1:]] == [True, True]
    # Time travel to the middle commit reads the schema of its time (pyiceberg).
    mid = sorted(t.scan(snapshot_id=snaps[1].snapshot_id).to_arrow().to_pylist(), key=lambda r: r["id"])
    assert [r["qty"] for r in mid] == [11, 20, 30, 40] and mid[3]["note"] == "four" and mid[0]["note"] is None
    # lakesync scan agrees with pyiceberg.
    scanned = env.lakesync("scan", "--table", "db.t", "--format", "jsonl").stdout.splitlines()
    assert sorted((json.loads(line) for line in scanned), key=by_row) == delta_rows(src)
    assert env.run_job(job, "--once")[1][-1]["status"] == "nothing-new"


def test_delta_source_adds_nested_fields_and_a_nested_column(env):
    """deltalake merges a new field into a struct column and adds a list-of-struct column, then a later
    commit adds a field inside that list's structs. The target gains the fields with fresh ids, keeps
    the ids it had, and ends equal to the source; without schema evolution the first new field stops
    the run instead of being dropped."""
    from deltalake import write_deltalake
    src = env.root / "nested"
    st = pa.struct([("a", pa.int32())])
    write_deltalake(str(src), pa.table({"id": pa.array([1, 2], pa.int64()), "st": pa.array([{"a": 1}, {"a": 2}], st)}),
                    configuration={"delta.enableChangeDataFeed": "true"})
    strict = write_job(env, {"type": "delta_lake_cdc", "table": str(src), "start_version": 0, "end_version": 1,
                             "initial_snapshot": True}, schema_evolution="none").rename(env.root / "strict.yaml")
    strict_doc = yaml.safe_load(strict.read_text())
    strict_doc["sink"]["table"] = "db.strict"
    strict.write_text(yaml.safe_dump(strict_doc))
    env.run_job(strict, "--once")
    job = delta_job(env, src)
    p, runs = env.run_job(job, "--once")
    assert runs[0]["status"] == "committed"
    before = iceberg_table(env).schema()
    assert before.find_field("st.a").field_id == 3

    # v1 adds st.b, v2 the column li, v3 the field li.element.d.
    st2 = pa.struct([("a", pa.int32()), ("b", pa.string())])
    write_deltalake(str(src), pa.table({"id": pa.array([3], pa.int64()), "st": pa.array([{"a": 3, "b": "x"}], st2)}),
                    mode="append", schema_mode="merge")
    li = pa.list_(pa.struct([("c", pa.float64())]))
    write_deltalake(str(src), pa.table({"id": pa.array([4], pa.int64()), "st": pa.array([{"a": 4, "b": "y"}], st2),
                                        "li": pa.array([[{"c": 1.5}]], li)}), mode="append", schema_mode="merge")
    li2 = pa.list_(pa.struct([("c", pa.float64()), ("d", pa.string())]))
    write_deltalake(str(src), pa.table({"id": pa.array([5], pa.int64()), "st": pa.array([None], st2),
                                        "li": pa.array([[{"c": 2.5, "d": "z"}, None]], li2)}),
                    mode="append", schema_mode="merge")
    p, runs = env.run_job(job, "--once")
    assert [r["status"] for r in runs] == ["committed"], p.stdout + p.stderr
    assert runs[-1]["range"] == {"from": 1, "through": 3}
    assert iceberg_rows(env) == delta_rows(src)
    after = iceberg_table(env).schema()
    assert after.find_field("st.a").field_id == 3 and after.find_field("st").field_id == 2
    new_ids = [after.find_field(n).field_id for n in ("st.b", "li", "li.element", "li.element.c", "li.element.d")]
    assert len(set(new_ids)) == 5 and min(new_ids) > 3, new_ids
    scanned = env.lakesync("scan", "--table", "db.t", "--format", "jsonl").stdout.splitlines()
    assert sorted((json.loads(line) for line in scanned), key=by_row) == delta_rows(src)

    # schema_evolution: none refuses the new field by name rather than dropping its values.
    p = env.lakesync("run", strict, "--once", check=False)
    assert p.returncode != 0, p.stdout
    assert "st.b" in p.stderr and "not in the table schema" in p.stderr, p.stderr


def test_incompatible_change_stops_the_job_and_a_rerun_after_fixing_resumes_exactly(env):
    from deltalake import DeltaTable, write_deltalake
    src = env.root / "d"
    delta_create(src)
    job = delta_job(env, src)
    env.run_job(job, "--once")
    write_deltalake(str(src), pa.table({"id": pa.array([4], pa.int64()), "qty": pa.array([40], pa.int32()),
                                        "price": pa.array([4.5], pa.float32())}), mode="append")  # v1
    DeltaTable(str(src)).delete()  # v2: every row goes
    # v3: qty becomes a double — no Iceberg promotion takes int to double; v4 appends one more row.
    changed = pa.schema([("id", pa.int64()), ("qty", pa.float64()), ("price", pa.float32())])
    write_deltalake(str(src), pa.table({"id": pa.array([1, 2], pa.int64()), "qty": [0.5, 1.5],
                                        "price": pa.array([1.0, 2.0], pa.float32())}, schema=changed),
                    mode="overwrite", schema_mode="overwrite")
    write_deltalake(str(src), pa.table({"id": pa.array([5], pa.int64()), "qty": [2.5], "price": pa.array([5.5], pa.float32())},
                                       schema=changed), mode="append")
    before = json.loads(env.lakesync("table", "describe", "db.t", "--json").stdout)

    p, runs = env.run_job(job, "--once", check=False)
    assert p.returncode != 0
    message = p.stderr
    assert "column 'qty' changed from int to double" in message, message
    assert "at source position 4" in message and "lakesync table alter db.t" in message, message
    assert "schema_evolution: none" in message, message
    # The part before the change (v1..v2) committed; the change itself left the table's schema as it was.
    after = json.loads(env.lakesync("table", "describe", "db.t", "--json").stdout)
    assert after["schemas"] == before["schemas"] and after["current-schema-id"] == before["current-schema-id"]
    assert len(after["snapshots"]) == len(before["snapshots"]) + 1
    assert iceberg_rows(env) == []

    # The fix: move the old column out of the way; the source's qty then arrives as a new column.
    env.lakesync("table", "alter", "db.t", "rename-column", "qty", "qty_int")
    p, runs = env.run_job(job, "--once")
    assert [(r["status"], r["range"]) for r in runs] == [("committed", {"from": 3, "through": 4})], p.stdout
    got = iceberg_rows(env)
    assert sorted(({k: r[k] for k in ("id", "qty", "price")} for r in got), key=by_row) == delta_rows(src)  # no lost or doubled rows
    fields = {f.name: f.field_id for f in iceberg_table(env).schema().fields}
    assert fields == {"id": 1, "qty_int": 2, "price": 3, "qty": 4}


def test_overwrite_changing_a_type_while_removing_old_rows(env):
    """The overwrite that changes qty int → double also removes the rows written with int: its change
    feed reads those files (the deletes) at the new type. The job must stop with the schema-change
    message, not a reader error, and after the fix apply the deletes and the new rows exactly."""
    from deltalake import DeltaTable, write_deltalake
    src = env.root / "d"
    delta_create(src)  # v0: ids 1-3, qty int
    job = delta_job(env, src)
    env.run_job(job, "--once")
    changed = pa.schema([("id", pa.int64()), ("qty", pa.float64()), ("price", pa.float32())])
    write_deltalake(str(src), pa.table({"id": pa.array([1, 2], pa.int64()), "qty": [0.5, 20.0],
                                        "price": pa.array([1.5, 2.0], pa.float32())}, schema=changed),
                    mode="overwrite", schema_mode="overwrite")  # v1: id 3 goes, ids 1 and 2 change
    write_deltalake(str(src), pa.table({"id": pa.array([5], pa.int64()), "qty": [2.5],
                                        "price": pa.array([5.5], pa.float32())}, schema=changed), mode="append")
    before = json.loads(env.lakesync("table", "describe", "db.t", "--json").stdout)
    rows_before = iceberg_rows(env)

    p, _ = env.run_job(job, "--once", check=False)
    assert p.returncode != 0
    assert "column 'qty' changed from int to double" in p.stderr, p.stderr
    assert "lakesync table alter db.t" in p.stderr, p.stderr
    after = json.loads(env.lakesync("table", "describe", "db.t", "--json").stdout)
    assert after["snapshots"] == before["snapshots"] and after["schemas"] == before["schemas"]
    assert iceberg_rows(env) == rows_before

    env.lakesync("table", "alter", "db.t", "rename-column", "qty", "qty_int")
    p, runs = env.run_job(job, "--once")
    assert [r["status"] for r in runs] == ["committed"], p.stdout
    got = iceberg_rows(env)
    assert sorted(({k: r[k] for k in ("id", "qty", "price")} for r in got), key=by_row) == delta_rows(src)
    assert all(r["qty_int"] is None for r in got), got  # every row of the old type was removed


def test_schema_evolution_none_keeps_the_old_refusal(env):
    from deltalake import write_deltalake
    src = env.root / "d"
    delta_create(src)
    job = delta_job(env, src, schema_evolution="none")
    env.run_job(job, "--once")
    write_deltalake(str(src), pa.table({"id": pa.array([4], pa.int64()), "qty": pa.array([40], pa.int32()),
                                        "price": pa.array([4.5], pa.float32()), "note": ["x"]}),
                    mode="append", schema_mode="merge")
    p, _ = env.run_job(job, "--once", check=False)
    assert p.returncode != 0 and "input column 'note' is not a column of table db.t" in p.stderr, p.stderr
    assert [f.name for f in iceberg_table(env).schema().fields] == ["id", "qty", "price"]
    bad = delta_job(env, src, schema_evolution="sometimes")
    p, _ = env.run_job(bad, "--once", check=False)
    assert p.returncode != 0 and "schema_evolution must be additive or none" in p.stderr


def test_iceberg_source_add_rename_widen_followed_by_field_id(env):
    from pyiceberg.schema import Schema
    from pyiceberg.types import FloatType, IntegerType, LongType, NestedField, StringType, DoubleType
    catalog = env.catalog()
    catalog.create_namespace_if_not_exists("src")
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "n", IntegerType()),
                    NestedField(3, "name", StringType()), NestedField(4, "x", FloatType()), identifier_field_ids=[1])
    src = catalog.create_table("src.t", schema, properties={"format-version": "2"})
    arrow_schema = src.schema().as_arrow()
    src.append(pa.Table.from_pylist([{"id": 1, "n": 1, "name": "a", "x": 0.5}, {"id": 2, "n": 2, "name": "b", "x": 1.5}],
                                    schema=arrow_schema))
    job = write_job(env, {"type": "iceberg_cdc", "table": "src.t", "starting_strategy": "earliest"})
    p, runs = env.run_job(job, "--once")
    assert runs[-1]["status"] == "committed", p.stderr

    with src.update_schema() as u:
        u.add_column("city", StringType())
        u.rename_column("name", "label")
        u.update_column("n", LongType())
        u.update_column("x", DoubleType())
    src = catalog.load_table("src.t")
    src.append(pa.Table.from_pylist([{"id": 3, "n": 2**40, "label": "c", "x": 2.5, "city": "porto"}],
                                    schema=src.schema().as_arrow()))
    p, runs = env.run_job(job, "--once")
    assert runs[-1]["status"] == "committed", p.stderr
    target = iceberg_table(env)
    fields = {f.name: (f.field_id, str(f.field_type)) for f in target.schema().fields}
    # The renamed column keeps its id (2 → `label` is the old `name`, id 3); city is a new id.
    assert fields == {"id": (1, "long"), "n": (2, "long"), "label": (3, "string"), "x": (4, "double"),
                      "city": (5, "string")}
    want = sorted(catalog.load_table("src.t").scan().to_arrow().to_pylist(), key=by_row)
    assert iceberg_rows(env) == want
    assert [r["label"] for r in sorted(iceberg_rows(env), key=lambda r: r["id"])] == ["a", "b", "c"]  # old rows read the renamed column by id


def test_delta_column_mapping_rename_is_followed(env):
    """A Spark-written column-mapping (name mode) table from the corpus, renamed the way Spark's
    ALTER TABLE RENAME COLUMN does it: one commit whose metaData changes a logical name and keeps the
    physical name. deltalake reads the renamed table; the target renames its column (same id)."""
    src = env.root / "cm"
    subprocess.run(["tar", "--zstd", "-xf", SHARED / "corpora" / "delta-cdf" / "cdf-column-mapping-name-mode.tar.zst",
                    "-C", env.root], check=True)
    shutil.move(env.root / "cdf-column-mapping-name-mode", src)
    job = delta_job(env, src)
    p, runs = env.run_job(job, "--once")
    assert runs[-1]["status"] == "committed", p.stderr
    before = {f.name: f.field_id for f in iceberg_table(env).schema().fields}
    assert "name" in before

    rename_column(src, "name", "full_name")

    p, runs = env.run_job(job, "--once")
    assert runs[-1]["status"] == "committed", p.stderr
    after = {f.name: f.field_id for f in iceberg_table(env).schema().fields}
    assert "name" not in after and after["full_name"] == before["name"]
    assert len(after) == len(before)
    # deltalake's DataFusion reader (its to_pyarrow_table reads this corpus table as NULLs:
    # tests/delta/delta_oracles.py) reads the renamed logical name.
    from deltalake import DeltaTable, QueryBuilder
    want = QueryBuilder().register("t", DeltaTable(str(src))).execute("SELECT * FROM t").read_all()
    want = pa.table(want).to_pylist()
    assert len(want) == 3 and all(r["id"] is not None for r in want) and "full_name" in want[0]
    assert iceberg_rows(env) == sorted(want, key=by_row)


def test_a_schema_change_racing_the_commit_fails_the_run_cleanly_and_the_rerun_follows(env):
    """The job writes its files for the schema it is about to add; another writer changes the schema
    before the job commits (held at the failpoint commit.pause until then). The commit must not land
    on the other schema: the run fails saying so, and the next run evolves from the new schema."""
    import subprocess
    import time
    from deltalake import write_deltalake
    from job_support import LAKESYNC
    src = env.root / "d"
    delta_create(src)
    job = delta_job(env, src)
    env.run_job(job, "--once")
    write_deltalake(str(src), pa.table({"id": pa.array([4], pa.int64()), "qty": pa.array([40], pa.int32()),
                                        "price": pa.array([4.5], pa.float32()), "note": ["four"]}),
                    mode="append", schema_mode="merge")
    release = env.root / "release"
    armed = dict(env.env, LAKESYNC_FAILPOINTS=f"commit.pause=wait:{release}")
    proc = subprocess.Popen([str(LAKESYNC), "run", str(job), "--once"], env=armed, cwd=env.root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while not list(env.root.glob("release.reached.*")):
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the job did not reach its commit in 180 s"
            time.sleep(0.02)  # polling a condition (a file), not timing anything
        env.lakesync("table", "alter", "db.t", "add-column", "extra", "string")
        release.touch()
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode != 0, out
    assert "the schema of db.t changed" in err, err
    t = iceberg_table(env)
    assert [f.name for f in t.schema().fields] == ["id", "qty", "price", "extra"]
    assert sorted(r["id"] for r in iceberg_rows(env)) == [1, 2, 3]

    p, runs = env.run_job(job, "--once")
    assert [r["status"] for r in runs] == ["committed"], p.stderr
    fields = {f.name: f.field_id for f in iceberg_table(env).schema().fields}
    assert fields == {"id": 1, "qty": 2, "price": 3, "extra": 4, "note": 5}
    assert [{k: r[k] for k in ("id", "qty", "price", "note")} for r in iceberg_rows(env)] == delta_rows(src)
