"""Spark 4.0 with Delta 4.0 as the reference writer and reader for lakesync's Delta source.

Heavy: run by CI within `scripts/test.sh`; alone: `scripts/test-spark.sh`. deltalake (delta-rs) cannot write deletion
vectors, so these are the suite's Delta tables with change data feed *and* deletion vectors, written
by Spark's own DELETE, UPDATE and MERGE, with column mapping (a renamed column, so physical and
logical names differ), checkpoints every three versions (classic, and v2 checkpoints in the
partitioned variant), and a timestamp_ntz column.

1. The generator is checked on its own (these run without lakesync's Delta source): Spark's snapshot
   at every version and Spark's change feed (`readChangeFeed`) equal what this file computes by
   mirroring each statement in Python, and the log holds what the table is meant to exercise
   (deletion vectors, `cdc` files, checkpoints, column mapping).
2. lakesync against Spark: `lakesync changes --source delta --format jsonl` must equal Spark's change
   feed for several version ranges (row values, `_change_type`, `_commit_version`,
   `_commit_timestamp`), and `lakesync scan --delta` Spark's snapshot read at the same versions.
   (They used to skip when lakesync answered "not implemented"; the Delta source exists, so any
   error is now a failure.)
"""

from __future__ import annotations

import collections
import datetime as dt
import decimal
import glob
import json
import os
import random
from pathlib import Path

import pytest

import oracles as O
import spark_runner as SR
from spark_tables import spark_ddl

pytestmark = [SR.needs_spark]
pa = pytest.importorskip("pyarrow")

INNER = {"type": "struct", "fields": [{"name": "a", "type": "int", "required": False},
                                      {"name": "b", "type": "string", "required": False}]}
# Logical columns (Iceberg type notation, for oracles.py's normalisation). `note` is created as
# `memo` and renamed, so under column mapping its physical name is neither.
COLUMNS = [
    {"name": "id", "type": "long", "required": True},
    {"name": "cat", "type": "string", "required": False},
    {"name": "amount", "type": "decimal(12, 2)", "required": False},
    {"name": "f", "type": "double", "required": False},
    {"name": "d", "type": "date", "required": False},
    {"name": "ts", "type": "timestamptz", "required": False},
    {"name": "tsn", "type": "timestamp", "required": False},
    {"name": "note", "type": "string", "required": False},
    {"name": "st", "type": INNER, "required": False},
    {"name": "li", "type": {"type": "list", "element": "int", "element-required": False}, "required": False},
    {"name": "mp", "type": {"type": "map", "key": "string", "value": "long", "value-required": False},
     "required": False},
]
IDX = {c["name"]: k for k, c in enumerate(COLUMNS)}
CATS = ["a", "b", "c", "d e", "ü"]
CDF_COLUMNS = ["_change_type", "_commit_version", "_commit_timestamp"]
FIRST_DATA_VERSION = 2  # v0 create, v1 the column rename; change feeds are read from here on


def gen_rows(n: int, seed: int, first_id: int = 0, ids: list[int] | None = None) -> list[tuple]:
    r = random.Random(seed)

    def maybe(make, p=0.1):
        return None if r.random() < p else make()

    out = []
    for k in range(n):
        out.append((
            ids[k] if ids is not None else first_id + k,
            maybe(lambda: r.choice(CATS)),
            maybe(lambda: decimal.Decimal(r.randint(-100_000, 100_000)).scaleb(-2)),
            maybe(lambda: r.uniform(-1e3, 1e3)),
            maybe(lambda: dt.date(2024, 1, 1) + dt.timedelta(days=r.randint(-400, 400))),
            maybe(lambda: 1_704_067_200_000_000 + r.randrange(-10**13, 10**13)),
            maybe(lambda: 1_704_067_200_000_000 + r.randrange(-10**13, 10**13)),
            maybe(lambda: "".join(r.choice("xyz é日🙂") for _ in range(r.randint(0, 6)))),
            maybe(lambda: (maybe(lambda: r.randint(-9, 9)), maybe(lambda: r.choice(CATS)))),
            maybe(lambda: tuple(maybe(lambda: r.randint(-99, 99)) for _ in range(r.randint(0, 3)))),
            maybe(lambda: tuple(sorted({r.choice(CATS): maybe(lambda: r.randint(-5, 5))
                                        for _ in range(r.randint(0, 2))}.items()))),
        ))
    return out


def c(row, name):
    return row[IDX[name]]


def replace(row, **values):
    out = list(row)
    for k, v in values.items():
        out[IDX[k]] = v
    return tuple(out)


class DeltaTable:
    """One Spark-written Delta table and, per version, the rows and the change feed this file
    expects (from the generated data and the Python mirror of each statement)."""

    def __init__(self, spark: SR.SparkProcess, root: Path, variant: str):
        self.spark = spark
        self.root = root
        self.variant = variant
        self.path = root / "table"
        self.partitioned = variant == "partitioned-v2checkpoint"
        self.states: dict[int, dict[int, tuple]] = {}  # version -> id -> row
        self.changes: dict[int, list[tuple]] = {}      # version -> [(row, change type)]
        self.version = -1
        self._n = 0

    def _sql(self, *statements: str) -> None:
        self.spark.sql(*statements)

    def _commit(self, live: dict, changes: list[tuple]) -> None:
        self.version += 1
        self.states[self.version] = dict(live)
        self.changes[self.version] = changes

    def _load(self, rows: list[tuple]) -> None:
        self._n += 1
        path = O.write_parquet(self.root / f"in-{self._n}.parquet", rows, COLUMNS)
        self.spark.run("spark.read.parquet(args['src']).repartition(2).write.format('delta').mode('append')"
                       ".save(args['path'])", src=str(path), path=str(self.path))

    def build(self) -> "DeltaTable":
        t = f"delta.`{self.path}`"
        ddl = spark_ddl([{**col, "name": "memo"} if col["name"] == "note" else col for col in COLUMNS])
        props = {"delta.enableChangeDataFeed": "true", "delta.enableDeletionVectors": "true",
                 "delta.columnMapping.mode": "name", "delta.checkpointInterval": "3"}
        if self.partitioned:
            props["delta.checkpointPolicy"] = "v2"
        self._sql(f"CREATE TABLE {t} ({ddl}) USING delta"
                  + (" PARTITIONED BY (cat)" if self.partitioned else "")
                  + " TBLPROPERTIES (" + ", ".join(f"'{k}' = '{v}'" for k, v in props.items()) + ")")
        live: dict[int, tuple] = {}
        self._commit(live, [])
        self._sql(f"ALTER TABLE {t} RENAME COLUMN memo TO note")
        self._commit(live, [])
        assert self.version + 1 == FIRST_DATA_VERSION

        for lo, hi, seed in ((0, 600, 1), (600, 1000, 2)):
            rows = gen_rows(hi - lo, seed=seed, first_id=lo)
            self._load(rows)
            live.update((r[0], r) for r in rows)
            self._commit(live, [(r, "insert") for r in rows])

        def delete(where: str, predicate) -> None:
            gone = [r for r in live.values() if predicate(r)]
            assert gone
            self._sql(f"DELETE FROM {t} WHERE {where}")
            for r in gone:
                del live[r[0]]
            self._commit(live, [(r, "delete") for r in gone])

        delete("amount < -500", lambda r: c(r, "amount") is not None and c(r, "amount") < -500)

        hit = [r for r in live.values() if c(r, "cat") == "b" or r[0] % 13 == 0]
        self._sql(f"UPDATE {t} SET note = concat('u-', coalesce(note, '')), "
                  f"amount = coalesce(amount, 0) + 1 WHERE cat = 'b' OR id % 13 = 0")
        changes = []
        for r in hit:
            new = replace(r, note="u-" + (c(r, "note") or ""), amount=(c(r, "amount") or 0) + 1)
            changes += [(r, "update_preimage"), (new, "update_postimage")]
            live[r[0]] = new
        self._commit(live, changes)

        rnd = random.Random(7)
        keys = rnd.sample(sorted(live), 150)
        dels, upds = keys[:50], keys[50:]
        news = gen_rows(80, seed=8, first_id=5000)
        changed = gen_rows(len(upds), seed=9, ids=upds)
        source = [live[k] + ("d",) for k in dels] + [x + ("u",) for x in changed] + [x + ("i",) for x in news]
        self._n += 1
        src = O.write_parquet(self.root / f"merge-{self._n}.parquet", source,
                              COLUMNS + [{"name": "op", "type": "string", "required": False}])
        names = [col["name"] for col in COLUMNS]
        self.spark.run(
            "spark.read.parquet(args['src']).createOrReplaceTempView('delta_merge_source')\n"
            "spark.sql(args['merge']).collect()", src=str(src),
            merge=(f"MERGE INTO {t} t USING delta_merge_source s ON t.id = s.id "
                   "WHEN MATCHED AND s.op = 'd' THEN DELETE "
                   "WHEN MATCHED AND s.op = 'u' THEN UPDATE SET "
                   + ", ".join(f"t.`{n}` = s.`{n}`" for n in names)
                   + f" WHEN NOT MATCHED AND s.op = 'i' THEN INSERT ({', '.join(f'`{n}`' for n in names)}) "
                   f"VALUES ({', '.join(f's.`{n}`' for n in names)})"))
        changes = [(live.pop(k), "delete") for k in dels]
        for x in changed:
            changes += [(live[x[0]], "update_preimage"), (x, "update_postimage")]
            live[x[0]] = x
        for x in news:
            live[x[0]] = x
            changes.append((x, "insert"))
        self._commit(live, changes)

        # A second delete on files that already carry deletion vectors (the vectors must be merged).
        delete("id % 11 = 0", lambda r: r[0] % 11 == 0)
        rows = gen_rows(100, seed=10, first_id=9000)
        self._load(rows)
        live.update((r[0], r) for r in rows)
        self._commit(live, [(r, "insert") for r in rows])
        return self

    # --- Spark's view of it

    def spark_snapshot(self, version: int) -> list[tuple]:
        out = self.root / f"spark-snapshot-{version}"
        self.spark.run("write_parquet(spark.read.format('delta').option('versionAsOf', args['v']).load(args['p'])"
                       ".select(*args['cols']), args['out'])",
                       v=version, p=str(self.path), cols=[col["name"] for col in COLUMNS], out=str(out))
        return O.arrow_rows(SR.read_parquet_dir(out), COLUMNS)

    def spark_changes(self, start: int, end: int | None) -> list[tuple]:
        """Spark's change feed for [start, end] as canonical rows + (type, version, timestamp µs)."""
        out = self.root / f"spark-cdf-{start}-{end}"
        self.spark.run(
            "r = spark.read.format('delta').option('readChangeFeed', 'true').option('startingVersion', args['s'])\n"
            "if args['e'] is not None:\n    r = r.option('endingVersion', args['e'])\n"
            "write_parquet(r.load(args['p']).select(*args['cols']), args['out'])",
            s=start, e=end, p=str(self.path), cols=[col["name"] for col in COLUMNS] + CDF_COLUMNS, out=str(out))
        table = SR.read_parquet_dir(out)
        data = O.arrow_rows(table, COLUMNS)
        meta = zip(table["_change_type"].to_pylist(), table["_commit_version"].to_pylist(),
                   table["_commit_timestamp"].to_pylist())
        return [row + (ct, v, O.normalise(ts, "timestamptz", "arrow")) for row, (ct, v, ts) in zip(data, meta)]

    def expected_changes(self, start: int, end: int | None) -> list[tuple]:
        end = self.version if end is None else end
        return [O.normalise_row(row, COLUMNS, "python") + (kind, v)
                for v in range(start, end + 1) for row, kind in self.changes[v]]

    def log_actions(self) -> dict[int, list[dict]]:
        out = {}
        for f in sorted(glob.glob(str(self.path / "_delta_log" / "*.json"))):
            name = os.path.basename(f)
            if name[:20].isdigit():
                out[int(name[:20])] = [json.loads(line) for line in open(f) if line.strip()]
        return out


_TABLES: dict[str, DeltaTable] = {}


@pytest.fixture(params=["plain", "partitioned-v2checkpoint"])
def delta_table(request, spark, tmp_path_factory) -> DeltaTable:
    variant = request.param
    if variant not in _TABLES:
        _TABLES[variant] = DeltaTable(spark, tmp_path_factory.mktemp(f"delta-{variant}"), variant).build()
    return _TABLES[variant]


# ---------------------------------------------------------------------------------------------
# 1. The generator


def test_spark_delta_table_has_what_it_is_meant_to_exercise(delta_table):
    log = delta_table.log_actions()
    assert max(log) == delta_table.version
    metadata = [a["metaData"] for v in sorted(log) for a in log[v] if "metaData" in a][-1]
    conf = metadata["configuration"]
    assert conf["delta.enableChangeDataFeed"] == "true" and conf["delta.enableDeletionVectors"] == "true"
    assert conf["delta.columnMapping.mode"] == "name"
    schema = json.loads(metadata["schemaString"])
    note = next(f for f in schema["fields"] if f["name"] == "note")
    physical = note["metadata"]["delta.columnMapping.physicalName"]
    assert physical not in ("note", "memo"), "the renamed column's physical name must differ"
    protocol = [a["protocol"] for v in sorted(log) for a in log[v] if "protocol" in a][-1]
    assert {"deletionVectors", "columnMapping", "timestampNtz"} <= set(protocol.get("readerFeatures", []))

    with_dv = [v for v, actions in log.items()
               if any("add" in a and a["add"].get("deletionVector") for a in actions)]
    with_cdc = [v for v, actions in log.items() if any("cdc" in a for a in actions)]
    assert len(with_dv) >= 3, f"DELETE, UPDATE, MERGE and DELETE should write deletion vectors: {with_dv}"
    assert with_cdc, "some commit must carry cdc files"
    # The second delete merged vectors: an add with a DV whose file already had one.
    assert any(a["remove"].get("deletionVector") for a in log[delta_table.version - 1] if "remove" in a)

    log_dir = delta_table.path / "_delta_log"
    checkpoints = sorted(os.path.basename(p) for p in glob.glob(str(log_dir / "*.checkpoint*")))
    assert checkpoints, "delta.checkpointInterval=3 must have written checkpoints"
    if delta_table.partitioned:
        # v2 checkpoints: UUID-named top-level files (JSON here) whose adds live in sidecar files.
        assert "v2Checkpoint" in protocol.get("readerFeatures", [])
        assert all(len(name.split(".")) == 4 for name in checkpoints), checkpoints
        assert glob.glob(str(log_dir / "_sidecars" / "*.parquet")), "v2 checkpoints should have sidecars"
        assert all(a["add"]["partitionValues"] for v in log for a in log[v] if "add" in a)
    else:
        assert all(name.endswith(".checkpoint.parquet") for name in checkpoints), checkpoints


def test_spark_delta_snapshots_match_the_model(delta_table):
    for version in (FIRST_DATA_VERSION + 1, delta_table.version - 2, delta_table.version):
        want = O.normalise_rows(list(delta_table.states[version].values()), COLUMNS, "python")
        O.assert_same_rows(delta_table.spark_snapshot(version), want, f"Spark snapshot at version {version}")


def test_spark_delta_change_feed_matches_the_model(delta_table):
    got = [r[:-1] for r in delta_table.spark_changes(FIRST_DATA_VERSION, None)]
    O.assert_same_rows(got, delta_table.expected_changes(FIRST_DATA_VERSION, None), "Spark readChangeFeed")


# ---------------------------------------------------------------------------------------------
# 2. lakesync against Spark

def lakesync_changes(table: DeltaTable, start: int, end: int | None) -> list[tuple]:
    cli = O.Cli(table.root)
    args = ["changes", "--source", "delta", "--table", table.path, "--start-version", start,
            "--columns", ",".join(CDF_COLUMNS)]
    if end is not None:
        args += ["--end-version", end]
    names = [col["name"] for col in COLUMNS]
    out = []
    for line in cli.ok(*args, "--format", "jsonl").splitlines():
        doc = json.loads(line)
        assert list(doc) == names + CDF_COLUMNS, f"jsonl keys {list(doc)}"
        row = O.normalise_row({n: doc[n] for n in names}, COLUMNS, "jsonl")
        out.append(row + (doc["_change_type"], doc["_commit_version"],
                          O.normalise(doc["_commit_timestamp"], "timestamptz", "jsonl")))
    return out


@pytest.mark.parametrize("bounds", ["all", "from-a-checkpoint", "one-merge", "deletes-with-dvs"])
def test_lakesync_delta_changes_match_spark(delta_table, bounds):
    last = delta_table.version
    start, end = {"all": (FIRST_DATA_VERSION, None), "from-a-checkpoint": (3, None),
                  "one-merge": (last - 2, last - 2), "deletes-with-dvs": (4, last - 1)}[bounds]
    spark_rows = delta_table.spark_changes(start, end)
    O.assert_same_rows([r[:-1] for r in spark_rows], delta_table.expected_changes(start, end),
                       f"Spark change feed [{start}, {end}] against the model")
    O.assert_same_rows(lakesync_changes(delta_table, start, end), spark_rows,
                       f"lakesync changes --source delta [{start}, {end}] against Spark's readChangeFeed")


@pytest.mark.parametrize("at", ["latest", "after-first-delete", "after-merge"])
def test_lakesync_delta_scan_matches_spark(delta_table, at):
    version = {"latest": delta_table.version, "after-first-delete": FIRST_DATA_VERSION + 2,
               "after-merge": delta_table.version - 2}[at]
    want = delta_table.spark_snapshot(version)
    cli = O.Cli(delta_table.root)
    # The flags are the ones the Delta source's issue plans (`scan --delta PATH --version N`).
    out = cli.ok("scan", "--delta", delta_table.path, "--version", version, "--format", "jsonl")
    got = O.normalise_rows([json.loads(x) for x in out.splitlines()], COLUMNS, "jsonl")
    O.assert_same_rows(got, want, f"lakesync scan --delta at version {version} against Spark")
