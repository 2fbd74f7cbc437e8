"""Builds CDF-enabled Delta tables with deltalake (delta-rs) for the randomised suite: appends,
full and predicate overwrites, updates, deletes, merges and checkpoints, partitioned or not.
The history is random but reproducible from the seed. Not a test module.

deltalake rewrites files for updates, deletes and merges (copy-on-write, with `_change_data` files)
and writes no deletion vectors; DV-bearing inputs come from the corpus instead (oracles.md 1.1).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import random
from pathlib import Path

import pyarrow as pa

SCHEMA = pa.schema([
    ("id", pa.int64()),
    ("region", pa.string()),  # the partition column when partitioned
    ("amount", pa.decimal128(12, 2)),
    ("ts", pa.timestamp("us", tz="UTC")),
    ("day", pa.date32()),
    ("score", pa.float64()),
    ("flag", pa.bool_()),
    ("payload", pa.binary()),
    ("note", pa.string()),
])
REGIONS = ["eu", "us", "ap", "sa"]


def make_rows(rng: random.Random, ids: list[int]) -> pa.Table:
    def maybe(v):
        return None if rng.random() < 0.1 else v

    base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    cols = {
        "id": ids,
        "region": [rng.choice(REGIONS) for _ in ids],
        "amount": [maybe(decimal.Decimal(rng.randint(-10**8, 10**8)).scaleb(-2)) for _ in ids],
        "ts": [maybe(base + dt.timedelta(microseconds=rng.randint(0, 10**14))) for _ in ids],
        "day": [maybe(dt.date(2020, 1, 1) + dt.timedelta(days=rng.randint(0, 3000))) for _ in ids],
        "score": [maybe(rng.choice([rng.uniform(-1e6, 1e6), 0.0, -0.0, 1e-300])) for _ in ids],
        "flag": [maybe(rng.random() < 0.5) for _ in ids],
        "payload": [maybe(rng.randbytes(rng.randint(0, 12))) for _ in ids],
        "note": [maybe(rng.choice(["", "a", "ünï", "x" * 40, "q\"u\\o\nte"])) for _ in ids],
    }
    return pa.table(cols, schema=SCHEMA)


def build_table(path: Path, seed: int, versions: int, partitioned: bool, rows_per_op: int = 40,
                checkpoint_every: int = 7) -> list[str]:
    """Writes a table with `versions` commits (0 .. versions-1); returns the operation behind each."""
    from deltalake import DeltaTable, write_deltalake

    rng = random.Random(seed)
    next_id = 0

    def fresh(n):
        nonlocal next_id
        ids = list(range(next_id, next_id + n))
        next_id += n
        return make_rows(rng, ids)

    write_deltalake(str(path), fresh(rows_per_op), partition_by=["region"] if partitioned else None,
                    configuration={"delta.enableChangeDataFeed": "true"})
    ops = ["create"]  # the operation that made each version
    while len(ops) < versions:
        table = DeltaTable(str(path))
        before = table.version()
        op = rng.choices(["append", "update", "delete", "merge", "overwrite", "replace_where"],
                         weights=[4, 3, 3, 3, 1, 1])[0]
        if op == "append":
            write_deltalake(table, fresh(rng.randint(1, rows_per_op)), mode="append")
        elif op == "update":
            lo = rng.randint(0, max(0, next_id - 1))
            cond = f"id >= {lo} AND id < {lo + rng.randint(1, rows_per_op)}"
            if partitioned and rng.random() < 0.5:
                table.update(predicate=cond, updates={"region": f"'{rng.choice(REGIONS)}'"})  # moves rows
            else:
                table.update(predicate=cond, updates={"score": "score * 2", "note": "'updated'",
                                                      "amount": "amount + 1"})
        elif op == "delete":
            if rng.random() < 0.2 and partitioned:
                table.delete(f"region = '{rng.choice(REGIONS)}'")
            else:
                lo = rng.randint(0, max(0, next_id - 1))
                table.delete(f"id >= {lo} AND id < {lo + rng.randint(1, rows_per_op // 2)}")
        elif op == "merge":
            old = [rng.randint(0, max(0, next_id - 1)) for _ in range(rng.randint(1, rows_per_op // 2))]
            src = make_rows(rng, sorted(set(old)) + list(range(next_id, next_id + rng.randint(0, 10))))
            next_id += 10
            merger = table.merge(src, "t.id = s.id", source_alias="s", target_alias="t")
            if rng.random() < 0.3:
                merger = merger.when_matched_delete(predicate="s.flag = true")
            merger.when_matched_update_all().when_not_matched_insert_all().execute()
        elif op == "overwrite":
            write_deltalake(table, fresh(rng.randint(1, rows_per_op)), mode="overwrite")
        elif op == "replace_where":
            region = rng.choice(REGIONS)
            rows = fresh(rng.randint(1, 10))
            rows = rows.set_column(1, "region", pa.array([region] * rows.num_rows))
            write_deltalake(table, rows, mode="overwrite", predicate=f"region = '{region}'")
        if DeltaTable(str(path)).version() == before:
            continue  # deltalake commits nothing when a predicate matched no row
        ops.append(op)
        if len(ops) % checkpoint_every == 0:
            DeltaTable(str(path)).create_checkpoint()
    return ops


def enable_in_commit_timestamps(path: Path, from_version: int, step_ms: int = 5000) -> dict[int, int]:
    """deltalake 1.6.6 cannot write In-Commit Timestamps ("Error parsing property
    'delta.enableInCommitTimestamps'"), so this turns them on after the fact, the way a writer that
    enables ICT at `from_version` would have: that commit gets a protocol with the
    `inCommitTimestamp` writer feature and a metaData with `delta.enableInCommitTimestamps`,
    `delta.inCommitTimestampEnablementVersion` and `...EnablementTimestamp`; every commit from there
    on gets `commitInfo.inCommitTimestamp`, with commitInfo as its first line (PROTOCOL.md
    "In-Commit Timestamps"). The ICTs lie a year after the earlier commits' modification times so
    that a reader using the wrong source shows. Modification times are kept. Returns version -> ICT."""
    import json
    import os

    log = path / "_delta_log"
    files = {int(p.name[:20]): p for p in log.iterdir() if len(p.name) == 25 and p.name.endswith(".json")}
    first = max(files[v].stat().st_mtime_ns // 1_000_000 for v in range(from_version)) + 365 * 86_400_000
    icts = {v: first + (v - from_version) * step_ms for v in range(from_version, max(files) + 1)}
    meta = None
    for v in range(from_version):
        for line in files[v].read_text().splitlines():
            if '"metaData"' in line:
                meta = json.loads(line)
    for v in sorted(icts):
        st = files[v].stat()
        acts = [json.loads(line) for line in files[v].read_text().splitlines()]
        info = [a for a in acts if "commitInfo" in a] or [{"commitInfo": {"operation": "WRITE"}}]
        info[0]["commitInfo"]["inCommitTimestamp"] = icts[v]
        rest = [a for a in acts if "commitInfo" not in a]
        if v == from_version:
            assert not any("metaData" in a or "protocol" in a for a in rest)
            meta["metaData"]["configuration"].update({
                "delta.enableInCommitTimestamps": "true",
                "delta.inCommitTimestampEnablementVersion": str(from_version),
                "delta.inCommitTimestampEnablementTimestamp": str(icts[from_version])})
            rest = [{"protocol": {"minReaderVersion": 1, "minWriterVersion": 7,
                                  "writerFeatures": ["changeDataFeed", "inCommitTimestamp"]}}, meta] + rest
        files[v].write_text("".join(json.dumps(a) + "\n" for a in info[:1] + rest))
        os.utime(files[v], ns=(st.st_atime_ns, st.st_mtime_ns))
    return icts


def _newest_metadata(log: Path) -> tuple[int, dict]:
    last = max(int(f.stem) for f in log.glob("*.json"))
    metadata = None
    for v in range(last + 1):
        commit = log / f"{v:020d}.json"
        if not commit.exists():
            continue
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "metaData" in action:
                metadata = action["metaData"]
    assert metadata is not None, f"no metaData in {log}"
    return last, metadata


def _schema_commit(path: Path, operation: str, parameters: dict, timestamp_ms: int, change) -> int:
    """One commit whose metaData (the newest in the log) is changed by `change(fields of the schema)`,
    as Spark's ALTER TABLE commits are: nothing else in it."""
    log = Path(path) / "_delta_log"
    last, metadata = _newest_metadata(log)
    schema = json.loads(metadata["schemaString"])
    change(schema)
    metadata["schemaString"] = json.dumps(schema)
    commit = [{"commitInfo": {"timestamp": timestamp_ms, "operation": operation, "operationParameters": parameters}},
              {"metaData": metadata}]
    (log / f"{last + 1:020d}.json").write_text("\n".join(json.dumps(a) for a in commit) + "\n")
    return last + 1


def _struct_at(schema: dict, parents: list[str]) -> dict:
    """The struct type holding a field at a dotted path (its parents' names)."""
    struct = schema
    for name in parents:
        (field,) = [f for f in struct["fields"] if f["name"] == name]
        struct = field["type"]
    return struct


def rename_column(path: Path, old: str, new: str, timestamp_ms: int = 1767225600000) -> int:
    """Renames a column of a column-mapping table the way Spark's ALTER TABLE RENAME COLUMN does: one
    commit whose metaData (the newest in the log) changes the logical name and keeps the physical
    name. `old` may be a path to a struct field ("st.a"), `new` is then the field's new name alone
    (Spark's RENAME COLUMN st.a TO b). deltalake cannot write this commit, so it is written here.
    Returns the new version."""
    *parents, leaf = old.split(".")

    def change(schema):
        struct = _struct_at(schema, parents)
        assert any(f["name"] == leaf for f in struct["fields"]), (old, schema)
        for f in struct["fields"]:
            if f["name"] == leaf:
                f["name"] = new

    new_path = ".".join([*parents, new])
    return _schema_commit(path, "RENAME COLUMN", {"oldColumnPath": old, "newColumnPath": new_path}, timestamp_ms,
                          change)


def drop_column(path: Path, name: str, timestamp_ms: int = 1767225600000) -> int:
    """Drops a column of a column-mapping table the way Spark's ALTER TABLE DROP COLUMN does: one
    commit whose metaData no longer has the column; the data files keep its values (under its physical
    name), which readers no longer project. Returns the new version."""

    def change(schema):
        assert any(f["name"] == name for f in schema["fields"]), (name, schema)
        schema["fields"] = [f for f in schema["fields"] if f["name"] != name]

    return _schema_commit(path, "DROP COLUMNS", {"columns": json.dumps([name])}, timestamp_ms, change)


def create_small_cdf_table(path: Path) -> None:
    """Version 0 of the schema-evolution workload: ids 1-3, qty int32, price float32, Change Data Feed on."""
    from deltalake import write_deltalake
    write_deltalake(str(path), pa.table({"id": pa.array([1, 2, 3], pa.int64()), "qty": pa.array([10, 20, 30], pa.int32()),
                                         "price": pa.array([1.5, 2.5, 3.5], pa.float32())}),
                    configuration={"delta.enableChangeDataFeed": "true"})


def add_column_then_widen(path: Path) -> pa.Schema:
    """Four versions on create_small_cdf_table's table: v1 adds `note` (merge), v2 updates a row, v3
    widens qty int → long and price float → double (an overwrite with the new schema), v4 appends a
    value only the wider type holds. Returns the widened schema."""
    from deltalake import DeltaTable, write_deltalake
    write_deltalake(str(path), pa.table({"id": pa.array([4], pa.int64()), "qty": pa.array([40], pa.int32()),
                                         "price": pa.array([4.5], pa.float32()), "note": ["four"]}),
                    mode="append", schema_mode="merge")
    DeltaTable(str(path)).update(updates={"qty": "qty + 1"}, predicate="id = 1")
    wide = pa.schema([("id", pa.int64()), ("qty", pa.int64()), ("price", pa.float64()), ("note", pa.string())])
    write_deltalake(str(path), DeltaTable(str(path)).to_pyarrow_table().cast(wide), mode="overwrite",
                    schema_mode="overwrite")
    write_deltalake(str(path), pa.table({"id": pa.array([5], pa.int64()), "qty": pa.array([2**40], pa.int64()),
                                         "price": pa.array([5.25], pa.float64()), "note": ["five"]}, schema=wide),
                    mode="append")
    return wide
