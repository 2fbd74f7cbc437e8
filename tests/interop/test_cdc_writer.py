"""Randomised differential tests of the merge-on-read CDC sink (`lakesync apply`).

Random change streams (fixed seeds) are applied commit by commit, and after EVERY commit the table is
compared with a plain Python model of the documented semantics (the issue text and docs/sink.md, not the
C++ code):

- per commit, each key's changes are ordered by (sequence, kind rank) with UPDATE_BEFORE 0 < DELETE 1 <
  UPDATE_AFTER 2 < INSERT 3, ties kept in input order; the last change is the key's state: INSERT and
  UPDATE_AFTER leave that row, DELETE and UPDATE_BEFORE leave nothing (so a key inserted and deleted in one
  batch writes nothing, and a before-image without an after-image deletes);
- an update that moves a row to another partition removes it where it was;
- deletes of keys that do not exist are counted (`missing_deletes`), not errors;
- with upsert, before-images are not needed: every INSERT/UPDATE_AFTER replaces its key if present.

The readers: `lakesync scan --format jsonl`, DuckDB 1.5.5 `iceberg_scan` (every strategy), pyiceberg 0.12
(not for equality deletes, which it refuses) and chDB 4.4 `icebergLocal` (not for v3 deletion vectors).
Each commit's JSON summary is checked against the model where the count is well defined, and each
snapshot summary must carry `lakesync.sink-id` and `lakesync.source-position.<sink id>`.

Then exactly-once: replays of committed positions are skipped with a message, a kill -9 at every failpoint
followed by a rerun converges to the model exactly once (files left behind by the killed run are not part
of the table), and two concurrent writers lose nothing.

Bugs these tests found (regression tests below): with delete_strategy equality, key-only deletes and
after-images without a before-image produced equality deletes in the wrong (null or new) partition, which
deleted nothing; `missing_deletes` was 0 on a table's first commit.
"""

from __future__ import annotations

import collections
import decimal
import json
import random
import signal
import sqlite3
import subprocess
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

import oracles as O

pytestmark = O.needs_lakesync

pa = pytest.importorskip("pyarrow")
pytest.importorskip("fastavro")

# ---------------------------------------------------------------------------------------------
# Schema, change kinds and the model

# The table's columns (the key is required: lakesync makes equality columns required on create).
COLUMNS = [
    {"name": "id", "type": "long", "required": True},
    {"name": "region", "type": "string", "required": False},  # the partition column (not part of the key)
    {"name": "amount", "type": "decimal(12, 2)", "required": False},
    {"name": "ts", "type": "timestamptz", "required": False},
    {"name": "note", "type": "string", "required": False},
]
NAMES = [c["name"] for c in COLUMNS]
# The change files: every table column nullable (key-only deletes and the bad rows of the error tests
# carry nulls), then the control columns.
CHANGE_COLUMNS = [{**c, "required": False} for c in COLUMNS] + [
    {"name": "op", "type": "string", "required": False},
    {"name": "seq", "type": "long", "required": False},
]

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = "INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"
RANK = {UPDATE_BEFORE: 0, DELETE: 1, UPDATE_AFTER: 2, INSERT: 3}
CODE = {INSERT: "c", UPDATE_BEFORE: "ub", UPDATE_AFTER: "u", DELETE: "d"}
CHANGE_TYPE_MAP = ",".join(f"{code}={kind}" for kind, code in CODE.items())
REGIONS = ["eu", "us", "apac", "sa east"]
TS_BASE = 1_704_067_200_000_000  # 2024-01-01T00:00:00Z in microseconds


@dataclass(frozen=True)
class Change:
    kind: str
    seq: int
    row: tuple  # values in COLUMNS order; a key-only delete has None everywhere but the key

    @property
    def key(self) -> int:
        return self.row[0]


@dataclass
class Expected:
    """What one commit must do, by the model."""

    rows_written: int = 0       # keys whose final change is INSERT/UPDATE_AFTER
    rows_removed: int = 0       # live rows the commit removes (keys touched that existed before it)
    missing_deletes: int = 0    # keys the batch says existed (first change not an INSERT) that did not
    keys: int = 0
    kinds: collections.Counter = None


class Model:
    """The table as a dict key -> row, changed one batch at a time by the documented rules."""

    def __init__(self, upsert: bool = False):
        self.rows: dict[int, tuple] = {}
        self.upsert = upsert

    def apply(self, changes: list[Change]) -> Expected:
        """`changes` in file order (ties of (sequence, rank) keep this order)."""
        exp = Expected(kinds=collections.Counter(c.kind for c in changes))
        by_key: dict[int, list[tuple]] = collections.defaultdict(list)
        for order, c in enumerate(changes):
            by_key[c.key].append((c.seq, RANK[c.kind], order, c))
        exp.keys = len(by_key)
        for key, items in by_key.items():
            items.sort(key=lambda t: t[:3])
            ordered = [t[3] for t in items]
            if self.upsert:
                ordered = [c for c in ordered if c.kind != UPDATE_BEFORE]  # before-images are not needed
                if not ordered:
                    continue
            existed = key in self.rows
            claims_existence = ordered[0].kind != INSERT
            if not self.upsert:
                # The generator keeps the source contract: an INSERT (first change) is never of a key
                # that exists; otherwise the expected result would be undefined.
                assert not (existed and not claims_existence), f"generator bug: INSERT of existing key {key}"
                if claims_existence and not existed:
                    exp.missing_deletes += 1
            if existed:
                exp.rows_removed += 1
            last = ordered[-1]
            if last.kind in (INSERT, UPDATE_AFTER):
                self.rows[key] = last.row
                exp.rows_written += 1
            else:
                self.rows.pop(key, None)
        return exp

    def canonical(self) -> list[tuple]:
        return O.normalise_rows(list(self.rows.values()), COLUMNS, "python")


# ---------------------------------------------------------------------------------------------
# Random change streams


class KeySet:
    """A set of ints with O(1) add, remove and uniform random choice."""

    def __init__(self, keys=()):
        self.items: list[int] = []
        self.where: dict[int, int] = {}
        for k in keys:
            self.add(k)

    def __contains__(self, k):
        return k in self.where

    def __len__(self):
        return len(self.items)

    def add(self, k):
        if k not in self.where:
            self.where[k] = len(self.items)
            self.items.append(k)

    def remove(self, k):
        i = self.where.pop(k)
        last = self.items.pop()
        if i < len(self.items):
            self.items[i] = last
            self.where[last] = i

    def choice(self, rng):
        return self.items[rng.randrange(len(self.items))]


class StreamGenerator:
    """Batches of changes for a model's current state. Keys come from a small pool so that they repeat
    within and across batches; sequence numbers grow through the stream; each batch's rows are shuffled
    so that only the sequence numbers order them."""

    def __init__(self, seed: int, key_pool: int, upsert: bool = False, key_only_deletes: bool = True,
                 stride: int = 1, offset: int = 0):
        self.rng = random.Random(seed)
        self.key_pool = key_pool
        self.stride, self.offset = stride, offset  # keys are offset + stride * n: disjoint writers
        self.upsert = upsert
        self.key_only_deletes = key_only_deletes
        self.seq = 1000

    def row(self, key: int, region: str | None = None) -> tuple:
        r = self.rng
        amount = decimal.Decimal(r.randint(-10**9, 10**9)).scaleb(-2)
        ts = TS_BASE + r.randint(-400, 400) * 86_400_000_000 + r.randint(0, 86_399_999_999)
        note = None if r.random() < 0.3 else "".join(r.choice("abcxyz é日🙂") for _ in range(r.randint(0, 6)))
        return (key, region or r.choice(REGIONS), amount, ts, note)

    def changed(self, old: tuple, move: float = 0.35) -> tuple:
        """An after-image of `old`: new values, sometimes in another partition."""
        new = self.row(old[0], old[1])
        if self.rng.random() < move:
            new = (new[0], self.rng.choice([x for x in REGIONS if x != old[1]]), *new[2:])
        return new

    def delete_image(self, row: tuple) -> tuple:
        if self.key_only_deletes and self.rng.random() < 0.35:
            return (row[0],) + (None,) * (len(COLUMNS) - 1)
        return row

    def new_key(self, live: KeySet) -> int | None:
        for _ in range(50):
            k = self.offset + self.stride * self.rng.randrange(self.key_pool)
            if k not in live:
                return k
        return None

    def batch(self, current: dict[int, tuple], events: int, weights: dict[str, float] | None = None) -> list[Change]:
        r = self.rng
        state = dict(current)  # the state as the batch unfolds, for before-images
        live = KeySet(state)
        out: list[Change] = []

        def put(k, row):
            state[k] = row
            live.add(k)

        def drop(k):
            state.pop(k, None)
            if k in live:
                live.remove(k)

        if self.upsert:
            kinds = ["insert", "insert_existing", "update_after", "delete", "delete_absent", "tie"]
            default = [4, 2, 4, 2, 1, 1]
        else:
            kinds = ["insert", "update", "delete", "delete_absent", "before_only", "insert_delete", "replace",
                     "after_only"]
            default = [5, 6, 3, 1, 1, 1, 1, 1]
        if weights is None:
            weights = dict(zip(kinds, default))
        weights = [weights.get(k, 0) for k in kinds]
        for _ in range(events):
            self.seq += r.choice((1, 1, 2, 5))
            s = self.seq
            kind = r.choices(kinds, weights)[0]
            if kind in ("update", "delete", "before_only", "replace", "insert_existing", "after_only") and not live:
                kind = "insert"
            if kind == "insert":
                k = self.new_key(live)
                if k is None:
                    continue
                row = self.row(k)
                out.append(Change(INSERT, s, row))
                put(k, row)
            elif kind == "update":  # an update pair: before-image with the OLD values
                k = live.choice(r)
                new = self.changed(state[k])
                out += [Change(UPDATE_BEFORE, s, state[k]), Change(UPDATE_AFTER, s, new)]
                put(k, new)
            elif kind == "delete":
                k = live.choice(r)
                out.append(Change(DELETE, s, self.delete_image(state[k])))
                drop(k)
            elif kind == "delete_absent":
                k = self.new_key(live)
                if k is None:
                    continue
                out.append(Change(DELETE, s, self.delete_image(self.row(k))))
            elif kind == "before_only":  # a before-image without an after-image deletes
                k = live.choice(r)
                out.append(Change(UPDATE_BEFORE, s, state[k]))
                drop(k)
            elif kind == "insert_delete":  # born and gone in one batch: nothing is written
                k = self.new_key(live)
                if k is None:
                    continue
                row = self.row(k)
                self.seq += 1
                out += [Change(INSERT, s, row), Change(DELETE, self.seq, self.delete_image(row))]
            elif kind == "replace":  # delete and re-insert at one sequence number: DELETE sorts first
                k = live.choice(r)
                new = self.changed(state[k])
                out += [Change(INSERT, s, new), Change(DELETE, s, self.delete_image(state[k]))]
                put(k, new)
            elif kind == "after_only":  # an after-image without its before-image still replaces the row
                k = live.choice(r)
                new = self.changed(state[k], move=0.5)
                out.append(Change(UPDATE_AFTER, s, new))
                put(k, new)
            elif kind == "insert_existing":  # upsert: an INSERT replaces the key
                k = live.choice(r)
                new = self.changed(state[k])
                out.append(Change(INSERT, s, new))
                put(k, new)
            elif kind == "update_after":  # upsert: an after-image alone, of an existing or a new key
                k = live.choice(r) if live and r.random() < 0.8 else self.new_key(live)
                if k is None:
                    continue
                new = self.changed(state[k]) if k in state else self.row(k)
                out.append(Change(UPDATE_AFTER, s, new))
                put(k, new)
            elif kind == "tie":
                # Two after-images of one key at the same sequence number: the later one in the file
                # wins. Which one that is is decided by the shuffle below, so the state is unknown here
                # (upsert needs no before-images, so later events do not depend on it).
                k = live.choice(r) if live else self.new_key(live)
                if k is None:
                    continue
                a, b = self.row(k), self.row(k)
                out += [Change(UPDATE_AFTER, s, a), Change(UPDATE_AFTER, s, b)]
                put(k, a)
        r.shuffle(out)
        return out


def write_changes(path: Path, changes: list[Change]) -> Path:
    rows = [c.row + (CODE[c.kind], c.seq) for c in changes]
    O.write_parquet(path, rows, CHANGE_COLUMNS)
    return path


# ---------------------------------------------------------------------------------------------
# Running apply and reading the table


@dataclass
class Setup:
    version: int
    strategy: str
    upsert: bool = False
    partition: str = "region"

    @property
    def id(self) -> str:
        return f"v{self.version}-{self.strategy}" + ("-upsert" if self.upsert else "") + (
            "" if self.partition == "region" else "-" + self.partition.split("(")[0])


def apply_args(name: str, setup: Setup, path: Path, position, sink_id: str = "s", extra=()) -> list:
    args = ["apply", "--table", name, "--changes", path, "--change-type-column", "op",
            "--change-type-map", CHANGE_TYPE_MAP, "--sequence-number-column", "seq", "--equality-columns", "id",
            "--partition-fields", setup.partition, "--table-properties", f"format-version={setup.version}",
            "--delete-strategy", setup.strategy, "--sink-id", sink_id, "--json", *extra]
    if position is not None:
        args += ["--source-position", str(position)]
    if setup.upsert:
        args.append("--upsert")
    return args


def apply(cli: O.Cli, name: str, setup: Setup, path: Path, position, **kw) -> dict:
    out = json.loads(cli.ok(*apply_args(name, setup, path, position, **kw)))
    [table] = out["tables"]
    assert table["table"] == name
    return out


def metadata_location(cli: O.Cli, name: str) -> str:
    ns, table = name.rsplit(".", 1)
    con = sqlite3.connect(f"file:{cli.catalog_db}?mode=ro", uri=True)
    try:
        [(location,)] = con.execute("SELECT metadata_location FROM iceberg_tables WHERE table_namespace = ? "
                                    "AND table_name = ?", (ns, table)).fetchall()
    finally:
        con.close()
    return location


class Readers:
    """Every reader that can read a table written with `setup`; compares each with the model."""

    def __init__(self, duckdb_con, chdb_sess):
        self.duckdb = duckdb_con
        self.chdb = chdb_sess
        self.seconds = collections.Counter()

    def check(self, cli: O.Cli, name: str, setup: Setup, model: Model, what: str) -> None:
        want = model.canonical()
        clock = time.monotonic()

        def lap(reader):
            nonlocal clock
            now = time.monotonic()
            self.seconds[reader] += now - clock
            clock = now

        got = O.normalise_rows(cli.scan_jsonl(name), COLUMNS, "jsonl")
        O.assert_same_rows(got, want, f"{what}: lakesync scan")
        lap("lakesync")
        location = metadata_location(cli, name)
        got = O.duckdb_rows(self.duckdb, location, COLUMNS)
        O.assert_same_rows(got, want, f"{what}: DuckDB iceberg_scan")
        lap("duckdb")
        if setup.strategy != "equality":  # pyiceberg refuses equality deletes
            table = O.sql_catalog(cli).load_table(name)
            assert table.metadata_location == location
            got = O.arrow_rows(table.scan().to_arrow(), COLUMNS)
            O.assert_same_rows(got, O.reader_view(want, COLUMNS, "pyiceberg"), f"{what}: pyiceberg scan")
            lap("pyiceberg")
        if setup.version == 2:  # chDB's icebergLocal does not read v3 deletion vectors
            table_location = location.rsplit("/metadata/", 1)[0]
            got = O.chdb_rows(self.chdb, table_location, COLUMNS)
            O.assert_same_rows(got, O.reader_view(want, COLUMNS, "chdb"), f"{what}: chDB icebergLocal")
            lap("chdb")


READER_SECONDS: collections.Counter = collections.Counter()


@pytest.fixture(scope="module")
def chdb_sess():
    sess = O.chdb_session()
    yield sess
    sess.close()
    print("reader seconds:", {k: round(v, 1) for k, v in READER_SECONDS.items()})


@pytest.fixture
def readers(chdb_sess):
    # A DuckDB connection per test: an internal error in DuckDB invalidates its database.
    con = O.duckdb_connection()
    r = Readers(con, chdb_sess)
    yield r
    READER_SECONDS.update(r.seconds)
    con.close()


def check_summary(cli: O.Cli, name: str, out: dict, exp: Expected, setup: Setup, position, sink_id="s") -> dict:
    """The apply's JSON summary against the model, and the snapshot it committed. Returns the snapshot."""
    [t] = out["tables"]
    assert not t["skipped"], t
    changes = out["changes"]
    assert changes["total"] == sum(exp.kinds.values())
    assert (changes["inserts"], changes["update_befores"], changes["update_afters"], changes["deletes"]) == (
        exp.kinds[INSERT], exp.kinds[UPDATE_BEFORE], exp.kinds[UPDATE_AFTER], exp.kinds[DELETE]), changes
    assert changes["keys"] == exp.keys
    assert t["rows_written"] == changes["rows_to_write"] == exp.rows_written, (t, changes, exp)
    assert out["dead_letters"] == 0
    if setup.strategy == "position":
        # Each removed key had exactly one live row, so positions removed = keys that existed.
        assert t["rows_deleted"] == exp.rows_removed, (t, exp)
        if not setup.upsert:
            # (With upsert every key is looked up, so "missing" counts new keys too: not checked.)
            assert t["missing_deletes"] == exp.missing_deletes, (t, exp)
    snap = cli.current_snapshot(name)
    assert snap["snapshot-id"] == t["snapshot_id"]
    summary = snap["summary"]
    assert summary.get("lakesync.sink-id") == sink_id, summary
    assert summary.get(f"lakesync.source-position.{sink_id}") == str(position), summary
    metadata = cli.metadata(name)
    assert metadata["properties"].get(f"lakesync.source-position.{sink_id}") == str(position)
    return snap


def check_delete_files(cli: O.Cli, name: str, setup: Setup) -> collections.Counter:
    """The current snapshot's delete files are of the kind the strategy asks for; v3 keeps one live
    deletion vector per data file. Returns the live delete files counted by kind."""
    metadata = cli.metadata(name)
    if metadata.get("current-snapshot-id") in (None, -1):
        return collections.Counter()
    entries = O.manifest_entries(metadata)
    data = {e["data_file"]["file_path"] for e in entries if e["data_file"]["content"] == 0}
    kinds = collections.Counter()
    dv_targets = collections.Counter()
    id_field = [f["id"] for f in metadata["schemas"][-1]["fields"] if f["name"] == "id"]
    for e in entries:
        f = e["data_file"]
        if f["content"] == 0:
            continue
        fmt = f["file_format"].upper()
        if f["content"] == 2:
            kinds["equality"] += 1
            assert setup.strategy == "equality", f"equality delete file with strategy {setup.strategy}: {f}"
            assert f["equality_ids"] == id_field, f
        elif fmt == "PUFFIN":
            kinds["dv"] += 1
            assert setup.version == 3, f"deletion vector in a v{setup.version} table"
            assert f["referenced_data_file"] in data, f"DV for {f['referenced_data_file']}, not a live data file"
            dv_targets[f["referenced_data_file"]] += 1
        else:
            kinds["position"] += 1
            assert setup.version == 2, f"v3 tables must use deletion vectors, found a position delete file {f}"
    assert all(n == 1 for n in dv_targets.values()), f"data files with several live DVs: {dv_targets}"
    return kinds


# ---------------------------------------------------------------------------------------------
# 1. Random streams, every strategy, every reader after every commit

SETUPS = [
    Setup(3, "position"),
    Setup(2, "position"),
    Setup(2, "equality"),
    Setup(3, "position", upsert=True),
    Setup(2, "position", upsert=True),
    # upsert with equality deletes needs the partition to follow from the key (there is no before-image)
    Setup(2, "equality", upsert=True, partition="bucket(id, 3)"),
]


@pytest.mark.parametrize("setup", SETUPS, ids=lambda s: s.id)
def test_random_stream_matches_the_model_after_every_commit(tmp_path, readers, setup):
    cli = O.Cli(tmp_path)
    name = "db.cdc"
    model = Model(upsert=setup.upsert)
    gen = StreamGenerator(seed=zlib.crc32(setup.id.encode()), key_pool=90, upsert=setup.upsert)
    kinds_seen = collections.Counter()
    moved = key_only_deletes = 0
    snapshots = 0
    for position in range(1, 9):
        events = 60 if position == 1 else 35
        changes = gen.batch(model.rows, events)
        before = dict(model.rows)
        exp = model.apply(changes)
        moved += sum(1 for k, row in model.rows.items() if k in before and before[k][1] != row[1])
        key_only_deletes += sum(1 for c in changes if c.kind == DELETE and c.row[1] is None and c.key in before)
        path = write_changes(tmp_path / f"changes-{position}.parquet", changes)
        out = apply(cli, name, setup, path, position)
        assert out["tables"][0]["created"] == (position == 1)
        check_summary(cli, name, out, exp, setup, position)
        snapshots += 1
        assert len(cli.history(name)) == snapshots, "one snapshot per apply"
        kinds_seen += check_delete_files(cli, name, setup)
        readers.check(cli, name, setup, model, f"{setup.id} after commit {position}")
    # The stream exercised what it is meant to (else the comparisons above prove little).
    assert moved > 0, "no update moved a row to another partition"
    assert key_only_deletes > 0, "no key-only delete of a row in the table"
    assert len(model.rows) > 10
    if setup.strategy == "equality":
        assert kinds_seen["equality"] > 0
    elif setup.version == 3:
        assert kinds_seen["dv"] > 0
    else:
        assert kinds_seen["position"] > 0


def test_the_model_implements_the_documented_rules():
    """The model's own checks on hand-made cases (so a wrong model cannot pass the tests above)."""
    eu, us = (7, "eu", decimal.Decimal("1.00"), 0, None), (7, "us", decimal.Decimal("2.00"), 0, "x")
    m = Model()
    assert m.apply([Change(INSERT, 1, eu)]).rows_written == 1 and m.rows == {7: eu}
    # Update pair at one sequence number, listed after-image first: the after-image still wins.
    exp = m.apply([Change(UPDATE_AFTER, 2, us), Change(UPDATE_BEFORE, 2, eu)])
    assert m.rows == {7: us} and exp.rows_removed == 1 and exp.rows_written == 1
    # A before-image without an after-image deletes; a delete of an absent key is counted.
    exp = m.apply([Change(UPDATE_BEFORE, 3, us), Change(DELETE, 4, (8, None, None, None, None))])
    assert m.rows == {} and exp.missing_deletes == 1 and exp.rows_removed == 1
    # Inserted and deleted in one batch: nothing; deleted and re-inserted at one sequence: the insert.
    exp = m.apply([Change(DELETE, 5, eu), Change(INSERT, 5, eu), Change(INSERT, 6, us), Change(DELETE, 7, us)])
    assert m.rows == {} and exp.rows_written == 0 and exp.missing_deletes == 1
    # Upsert: an INSERT of an existing key replaces it; ties keep file order.
    u = Model(upsert=True)
    u.apply([Change(INSERT, 1, eu)])
    exp = u.apply([Change(INSERT, 2, us), Change(UPDATE_AFTER, 3, eu), Change(UPDATE_AFTER, 3, us)])
    assert u.rows == {7: us} and exp.rows_removed == 1


def _row(key, region, cents=100, note=None):
    return (key, region, decimal.Decimal(cents).scaleb(-2), TS_BASE + key, note)


def _key_only(key):
    return (key,) + (None,) * (len(COLUMNS) - 1)


def test_key_only_deletes_with_equality_deletes_remove_the_row(tmp_path, readers):
    """Regression: equality deletes only reach their own partition, and a key-only DELETE carries no
    partition value. lakesync wrote it into the null partition, where it deleted nothing (and made
    DuckDB 1.5.5 fail with "Comparison on NULL values"); such keys are now resolved to positions."""
    setup = Setup(2, "equality")
    cli = O.Cli(tmp_path)
    name = "db.keyonly"
    model = Model()
    batches = [
        [Change(INSERT, 1, _row(1, "eu")), Change(INSERT, 1, _row(2, "us")), Change(INSERT, 1, _row(3, "eu")),
         Change(INSERT, 1, _row(4, "apac"))],
        [Change(DELETE, 2, _key_only(1)), Change(DELETE, 2, _row(2, "us")), Change(DELETE, 2, _key_only(9)),
         Change(UPDATE_BEFORE, 3, _row(4, "apac")), Change(UPDATE_AFTER, 3, _row(4, "eu", 400))],
    ]
    for position, changes in enumerate(batches, 1):
        exp = model.apply(changes)
        out = apply(cli, name, setup, write_changes(tmp_path / f"c{position}.parquet", changes), position)
        check_summary(cli, name, out, exp, setup, position)
        readers.check(cli, name, setup, model, f"key-only deletes, commit {position}")
    assert sorted(model.rows) == [3, 4]
    kinds = check_delete_files(cli, name, setup)
    assert kinds["equality"] > 0
    for e in O.manifest_entries(cli.metadata(name)):
        f = e["data_file"]
        if f["content"] == 2:
            assert f["partition"]["region"] is not None, f"an equality delete file in the null partition: {f}"


@pytest.mark.parametrize("setup", [Setup(3, "position"), Setup(2, "position"), Setup(2, "equality")],
                         ids=lambda s: s.id)
def test_an_after_image_alone_that_moves_the_row_replaces_it(tmp_path, readers, setup):
    """An UPDATE_AFTER without its UPDATE_BEFORE removes the key's old row (docs/sink.md: unlike Beam), also
    when it moves the row to another partition. Regression for equality deletes: the delete went to the
    after-image's partition and the old row stayed alive in its own."""
    cli = O.Cli(tmp_path)
    name = "db.afteronly"
    model = Model()
    batches = [
        [Change(INSERT, 1, _row(1, "eu")), Change(INSERT, 1, _row(2, "us")), Change(INSERT, 1, _row(3, "eu"))],
        [Change(UPDATE_AFTER, 2, _row(1, "us", 200)), Change(UPDATE_AFTER, 2, _row(2, "us", 300)),
         Change(UPDATE_AFTER, 2, _row(3, "apac", 400)), Change(UPDATE_AFTER, 3, _row(3, "sa east", 500))],
    ]
    for position, changes in enumerate(batches, 1):
        exp = model.apply(changes)
        out = apply(cli, name, setup, write_changes(tmp_path / f"c{position}.parquet", changes), position)
        check_summary(cli, name, out, exp, setup, position)
        readers.check(cli, name, setup, model, f"after-images alone, commit {position}")
    assert {k: r[1] for k, r in model.rows.items()} == {1: "us", 2: "us", 3: "sa east"}


def test_deletes_of_absent_keys_in_the_first_commit_are_counted(tmp_path, readers):
    """Regression: on a table without a snapshot, `missing_deletes` was 0 whatever was deleted."""
    setup = Setup(3, "position")
    cli = O.Cli(tmp_path)
    model = Model()
    changes = [Change(INSERT, 1, _row(1, "eu")), Change(DELETE, 1, _key_only(7)),
               Change(UPDATE_BEFORE, 2, _row(8, "us")), Change(UPDATE_AFTER, 2, _row(8, "eu"))]
    exp = model.apply(changes)
    assert exp.missing_deletes == 2
    out = apply(cli, "db.first", setup, write_changes(tmp_path / "c.parquet", changes), 1)
    assert out["tables"][0]["created"]
    check_summary(cli, "db.first", out, exp, setup, 1)
    readers.check(cli, "db.first", setup, model, "first commit")


# ---------------------------------------------------------------------------------------------
# 2. One batch of more than 100,000 changes with a 1 MiB sorter: the collapser spills to disk


def test_a_batch_of_over_100k_changes_spills_and_stays_exact(tmp_path, readers):
    """The suite's only big case (two commits of more than 100,000 changes each, about 10 s): with a
    1 MiB sorter the collapser spills to disk and collapses bucket by bucket."""
    setup = Setup(3, "position")
    cli = O.Cli(tmp_path)
    name = "db.big"
    model = Model()
    gen = StreamGenerator(seed=20240229, key_pool=160_000)
    # Commit 1: mostly new keys, some of them updated, moved or deleted again later in the same batch
    # (materialize#36206: keys written and changed in one commit must not be duplicated).
    first = gen.batch(model.rows, 90_000, weights={"insert": 12, "update": 3, "delete": 1, "delete_absent": 1,
                                                   "before_only": 0.5, "insert_delete": 1, "replace": 1})
    # Commit 2: the same pool again, now mostly updates and deletes of rows in the table.
    assert len(first) > 100_000, len(first)
    for position, changes in ((1, first), (2, None)):
        if changes is None:
            changes = gen.batch(model.rows, 76_000)
            assert len(changes) > 100_000, len(changes)
        exp = model.apply(changes)
        path = write_changes(tmp_path / f"big-{position}.parquet", changes)
        out = apply(cli, name, setup, path, position, extra=("--sorter-memory-mb", "1"))
        assert out["changes"]["spilled_bytes"] > 1 << 20, out["changes"]
        check_summary(cli, name, out, exp, setup, position)
        check_delete_files(cli, name, setup)
        readers.check(cli, name, setup, model, f"big batch {position}")
    assert len(model.rows) > 40_000


# ---------------------------------------------------------------------------------------------
# 3. Exactly-once


def test_replaying_a_committed_position_is_skipped_with_a_message(tmp_path, readers):
    setup = Setup(3, "position")
    cli = O.Cli(tmp_path)
    name = "db.once"
    model = Model()
    gen = StreamGenerator(seed=11, key_pool=60)
    paths = []
    for position in (1, 2):
        changes = gen.batch(model.rows, 40)
        model.apply(changes)
        paths.append(write_changes(tmp_path / f"c{position}.parquet", changes))
        apply(cli, name, setup, paths[-1], position)
    snapshots = cli.snapshot_ids(name)
    for path, position in ((paths[1], 2), (paths[0], 1), (paths[1], "1:labelled")):
        out = apply(cli, name, setup, path, position)
        [t] = out["tables"]
        assert t["skipped"] and t["snapshot_id"] is None and t["rows_written"] == 0, t
        assert "skipping" in t["message"] and str(position) in t["message"], t["message"]
        # The text output says so too.
        args = [a for a in apply_args(name, setup, path, position) if a != "--json"]
        text = cli.ok(*args)
        assert "nothing committed" in text and "skipping" in text, text
        assert cli.snapshot_ids(name) == snapshots
    readers.check(cli, name, setup, model, "after replays")
    # The next position applies (compared by the integer before ':').
    changes = gen.batch(model.rows, 20)
    exp = model.apply(changes)
    out = apply(cli, name, setup, write_changes(tmp_path / "c3.parquet", changes), "3:abc")
    check_summary(cli, name, out, exp, setup, "3:abc")
    readers.check(cli, name, setup, model, "after position 3")
    # A batch that leaves nothing to write still records its position (so the source moves on), and is
    # then skipped like any other: an empty file, and one whose only key is born and gone in it.
    for position, changes in ((4, []), (5, [Change(INSERT, 1, _row(500, "eu")), Change(DELETE, 2, _key_only(500))])):
        exp = model.apply(changes)
        path = write_changes(tmp_path / f"c{position}.parquet", changes)
        out = apply(cli, name, setup, path, position)
        check_summary(cli, name, out, exp, setup, position)
        assert out["tables"][0]["data_files"] == out["tables"][0]["delete_files"] == 0
        assert apply(cli, name, setup, path, position)["tables"][0]["skipped"]
    readers.check(cli, name, setup, model, "after progress-only commits")


def referenced_files(cli: O.Cli, name: str) -> set[str]:
    """Every file the current snapshot refers to: its manifest list, manifests and content files
    (including entries marked deleted), as local paths."""
    metadata = cli.metadata(name)
    snap = [s for s in metadata["snapshots"] if s["snapshot-id"] == metadata["current-snapshot-id"]][0]
    out = {O.local_path(snap["manifest-list"])}
    for m in O.read_avro_records(snap["manifest-list"]):
        out.add(O.local_path(m["manifest_path"]))
    for e in O.manifest_entries(metadata, live=False):
        out.add(O.local_path(e["data_file"]["file_path"]))
    return out


def table_files(cli: O.Cli, name: str) -> set[str]:
    location = O.local_path(cli.metadata(name)["location"])
    return {str(Path(location) / f) for f in O.list_files(Path(location))}


FAILPOINTS = ["after-data-files", "before-commit", "after-commit"]


@pytest.mark.parametrize("setup", [Setup(3, "position"), Setup(2, "equality")], ids=lambda s: s.id)
@pytest.mark.parametrize("failpoint", FAILPOINTS)
def test_kill_at_each_failpoint_then_rerun_applies_exactly_once(tmp_path, readers, failpoint, setup):
    cli = O.Cli(tmp_path)
    name = "db.crash"
    model = Model()
    gen = StreamGenerator(seed=FAILPOINTS.index(failpoint) * 10 + setup.version, key_pool=80)
    first = gen.batch(model.rows, 60)
    model.apply(first)
    apply(cli, name, setup, write_changes(tmp_path / "c1.parquet", first), 1)
    committed = dict(model.rows)

    changes = gen.batch(model.rows, 50)
    exp = model.apply(changes)
    path = write_changes(tmp_path / "c2.parquet", changes)
    snapshots = cli.snapshot_ids(name)
    files_before = table_files(cli, name)

    killed = O.Cli(tmp_path, env={"LAKESYNC_FAILPOINT": failpoint})
    done = killed.run(*apply_args(name, setup, path, 2))
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stderr[-2000:])
    left = table_files(cli, name) - files_before
    assert left, f"the run killed at {failpoint} wrote nothing"
    if failpoint == "after-data-files":
        assert any("/data/" in f for f in left), left
    elif failpoint == "before-commit":
        assert any(f.endswith(".avro") for f in left), left

    # What readers see right after the crash: before the catalog swap nothing happened at all.
    survived = Model()
    if failpoint == "after-commit":
        survived.rows = dict(model.rows)
        assert len(cli.snapshot_ids(name)) == len(snapshots) + 1
        assert cli.current_snapshot(name)["summary"]["lakesync.source-position.s"] == "2"
    else:
        survived.rows = committed
        assert cli.snapshot_ids(name) == snapshots
    readers.check(cli, name, setup, survived, f"right after the kill at {failpoint}")

    out = apply(cli, name, setup, path, 2)
    [t] = out["tables"]
    if failpoint == "after-commit":
        assert t["skipped"] and "skipping" in t["message"], t
    else:
        check_summary(cli, name, out, exp, setup, 2)
    assert len(cli.snapshot_ids(name)) == len(snapshots) + 1, "exactly one commit of position 2"
    readers.check(cli, name, setup, model, f"rerun after the kill at {failpoint}")

    # Files of the killed run may stay on disk as orphans, but the table must not refer to them.
    referenced = referenced_files(cli, name)
    if failpoint == "after-commit":
        assert left & referenced, "the killed run's commit should be the table's state"
    else:
        orphans = sorted(left - referenced)
        print(f"{failpoint}: {len(orphans)} orphan files left by the killed run: {orphans}")
        assert not (left & referenced), f"the table refers to files of the killed run: {left & referenced}"
        assert orphans


# ---------------------------------------------------------------------------------------------
# 4. Two writers at once


def spawn(cli: O.Cli, args: list) -> subprocess.Popen:
    # INFO logs show commit conflicts ("... conflicted ...; retrying" / "...; resolving keys again").
    return subprocess.Popen([str(O.LAKESYNC), "--log-level", "info", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=cli.env, cwd=cli.workdir)


def finish(proc: subprocess.Popen) -> tuple[dict, int]:
    """The apply's JSON summary and the number of commit conflicts it logged."""
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, f"apply exited {proc.returncode}: {stderr[-3000:]}"
    return json.loads(stdout), stderr.count(" conflicted ")


@pytest.mark.parametrize("setup", [Setup(3, "position"), Setup(2, "position")], ids=lambda s: s.id)
def test_two_writers_on_disjoint_keys_lose_nothing(tmp_path, readers, setup):
    """Both writers update and delete rows that live in the same data files (the first commit wrote
    every key), so their deletes collide on the same files; conflicts must be retried, not lost."""
    cli = O.Cli(tmp_path)
    name = "db.two"
    # Each writer owns half of the key pool: keys ≡ w (mod 2).
    gens = [StreamGenerator(seed=100 + w, key_pool=4000, stride=2, offset=w) for w in range(2)]
    models = [Model(), Model()]
    whole = Model()
    initial = []
    for w in range(2):
        part = gens[w].batch({}, 2000)
        models[w].apply(part)
        initial += part
    whole.apply(initial)
    apply(cli, name, setup, write_changes(tmp_path / "init.parquet", initial), 1, sink_id="init")
    readers.check(cli, name, setup, whole, "initial load")

    retries = 0
    for round_ in range(1, 4):
        procs, exps = [], []
        for w in range(2):
            changes = gens[w].batch(models[w].rows, 3000)
            exps.append(models[w].apply(changes))
            path = write_changes(tmp_path / f"w{w}-{round_}.parquet", changes)
            procs.append((w, path))
        running = [spawn(cli, apply_args(name, setup, path, round_, sink_id=f"w{w}")) for w, path in procs]
        outs = [finish(p) for p in running]
        for w, (out, conflicts) in enumerate(outs):
            [t] = out["tables"]
            assert not t["skipped"], t
            assert t["rows_written"] == exps[w].rows_written
            assert t["rows_deleted"] == exps[w].rows_removed, (w, t, exps[w])
            assert conflicts >= t["commit_attempts"] - 1
            retries += conflicts
        whole.rows = {**models[0].rows, **models[1].rows}
        readers.check(cli, name, setup, whole, f"round {round_}")
        check_delete_files(cli, name, setup)
        metadata = cli.metadata(name)
        for w in range(2):
            assert metadata["properties"][f"lakesync.source-position.w{w}"] == str(round_)
    print(f"{setup.id}: {retries} commit retries after conflicts")
    assert retries > 0, "the writers never raced: the test proved nothing about conflicts"


def test_two_writers_with_the_same_sink_and_position_commit_once(tmp_path, readers):
    setup = Setup(3, "position")
    cli = O.Cli(tmp_path)
    name = "db.same"
    model = Model()
    gen = StreamGenerator(seed=5, key_pool=6000)
    first = gen.batch(model.rows, 3000)
    model.apply(first)
    apply(cli, name, setup, write_changes(tmp_path / "c1.parquet", first), 1)
    for position in (2, 3, 4):
        changes = gen.batch(model.rows, 4000)
        exp = model.apply(changes)
        path = write_changes(tmp_path / f"c{position}.parquet", changes)
        snapshots = len(cli.snapshot_ids(name))
        running = [spawn(cli, apply_args(name, setup, path, position)) for _ in range(2)]
        outs = [finish(p)[0]["tables"][0] for p in running]
        committed = [t for t in outs if not t["skipped"]]
        skipped = [t for t in outs if t["skipped"]]
        assert len(committed) == 1 and len(skipped) == 1, outs
        assert str(position) in skipped[0]["message"], skipped[0]
        print(f"position {position}: the loser says: {skipped[0]['message']}")
        assert committed[0]["rows_written"] == exp.rows_written
        assert len(cli.snapshot_ids(name)) == snapshots + 1
        readers.check(cli, name, setup, model, f"same sink, position {position}")
        # The loser removed what it wrote: every data or delete file on disk belongs to some snapshot.
        metadata = cli.metadata(name)
        known = set()
        for snap in metadata["snapshots"]:
            known |= {O.local_path(e["data_file"]["file_path"])
                      for e in O.manifest_entries(metadata, snap["snapshot-id"], live=False)}
        on_disk = {f for f in table_files(cli, name) if "/data/" in f}
        assert on_disk <= known, f"files left by the losing writer: {sorted(on_disk - known)[:5]}"
