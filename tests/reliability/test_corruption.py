"""The corruption suite: damage generated on the fly in tables and logs these tests write, then read.

Every damaged input must give a clean error (a non-zero exit with a `lakesync: error:` line, never a
crash) or the correct result — never a silently wrong one — and a failed command must leave the table
exactly as it was. "Correct" is what the same command printed before the damage (scans) or what the
undamaged table gives after the same apply (applies; the damaged file is restored first, so that a
garbled entry carried into a new snapshot shows).

Classes (each generated from the files the tests just wrote, at several offsets):
  - bit flips and truncations of every Iceberg file kind of a v2 and a v3 table: table metadata,
    manifest lists, data and delete manifests, Parquet data files (page checksums), Puffin deletion
    vectors, Parquet position delete files — read by plain and filtered scans, and by applies;
  - manifests that still decode but say something else (rewritten with fastavro): a garbled
    referenced_data_file, content_offset or record_count, a dropped entry;
  - table metadata with required fields null or missing;
  - Delta logs: empty, truncated and garbled commit files, damaged checkpoints;
  - change streams with values that do not convert, in each change kind, in the second input file.

The counts go to $LAKESYNC_BUILD_DIR/reliability/corruption.json (docs/reliability.md).
"""

from __future__ import annotations

import collections
import hashlib
import io
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync

fastavro = pytest.importorskip("fastavro")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

COLUMNS = [
    {"name": "id", "type": "long", "required": True},
    {"name": "region", "type": "string", "required": False},
    {"name": "amount", "type": "decimal(12, 2)", "required": False},
    {"name": "note", "type": "string", "required": False},
]
ROWS = 600
COUNTS: collections.Counter = collections.Counter()  # (class, outcome) -> n
SEED = 1414


def record(kind: str, outcome: str) -> None:
    COUNTS[(kind, outcome)] += 1


@pytest.fixture(scope="module", autouse=True)
def write_summary():
    yield
    out = Path(os.environ.get("LAKESYNC_BUILD_DIR", "build")) / "reliability"
    out.mkdir(parents=True, exist_ok=True)
    by_class: dict = collections.defaultdict(dict)
    for (kind, outcome), n in sorted(COUNTS.items()):
        by_class[kind][outcome] = n
    total = sum(COUNTS.values())
    outcomes: collections.Counter = collections.Counter()
    for (_, outcome), n in COUNTS.items():
        outcomes[outcome] += n
    summary = {"total": total, "by_class": by_class, "outcomes": dict(outcomes)}
    (out / "corruption.json").write_text(json.dumps(summary, indent=2, sort_keys=True))
    print(f"\ncorruption suite: {total} damaged inputs: {json.dumps(summary['outcomes'])}")


def tree_state(root: Path) -> dict:
    files = {}
    for rel in O.list_files(root):
        if rel.startswith("catalog.db"):
            continue
        files[rel] = hashlib.sha256((root / rel).read_bytes()).hexdigest()
    rows = []
    db = root / "catalog.db"
    if db.exists():
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        rows = sorted(con.execute("SELECT * FROM iceberg_tables").fetchall())
        con.close()
    return {"files": files, "catalog": rows}


def outcome_of(done) -> str:
    """'error' for a clean failure; raises for a crash or a failure without an error line."""
    assert done.returncode >= 0, f"lakesync crashed with signal {-done.returncode}: {done.stderr[-3000:]}"
    if done.returncode == 0:
        return "ok"
    assert "lakesync: error: " in done.stderr, f"exit {done.returncode} without an error line: {done.stderr[-3000:]}"
    return "error"


class Damage:
    """Reversible damage to one file: bit flips at an offset or a truncation."""

    def __init__(self, path: Path):
        self.path = path
        self.original = path.read_bytes()
        # Delta commit timestamps come from file modification times: damage keeps them.
        stat = path.stat()
        self.times = (stat.st_atime_ns, stat.st_mtime_ns)

    def _write(self, data: bytes) -> None:
        self.path.write_bytes(data)
        os.utime(self.path, ns=self.times)

    def flip(self, offset: int, bit: int = 0) -> None:
        data = bytearray(self.original)
        data[offset] ^= 1 << bit
        self._write(bytes(data))

    def truncate(self, size: int) -> None:
        self._write(self.original[:size])

    def replace(self, data: bytes) -> None:
        self._write(data)

    def restore(self) -> None:
        self._write(self.original)


def offsets(size: int, n: int, rng: random.Random) -> list[int]:
    """n offsets spread over the file (one random offset in each of n equal slices)."""
    out = []
    for i in range(n):
        lo, hi = size * i // n, max(size * i // n, size * (i + 1) // n - 1)
        out.append(rng.randint(lo, hi))
    return out


# ---------------------------------------------------------------------------------------------
# Iceberg tables


def changes_file(path: Path, changes: list[dict]) -> Path:
    schema = pa.schema([("id", pa.int64()), ("region", pa.string()), ("amount", pa.decimal128(12, 2)),
                        ("note", pa.string()), ("op", pa.string()), ("seq", pa.int64())])
    pq.write_table(pa.Table.from_pylist(changes, schema=schema), path)
    return path


def apply_args(table: str, path: Path) -> list:
    return ["apply", "--table", table, "--changes", path, "--change-type-column", "op", "--sequence-number-column",
            "seq", "--equality-columns", "id"]


class IcebergTable:
    """A table with data files in three partitions, deletes, and an apply's updates and deletes."""

    def __init__(self, workdir: Path, version: int):
        import decimal

        self.cli = O.Cli(workdir)
        self.name = f"db.t{version}"
        self.version = version
        cli = self.cli
        cli.ok("namespace", "create", "db", "--if-not-exists")
        schema = O.schema_file(workdir / "schema.yaml", COLUMNS, ["id"])
        cli.ok("table", "create", self.name, "--schema", schema, "--partition", "region", "--format-version",
               str(version))
        rows = workdir / "rows.jsonl"
        with rows.open("w") as f:
            for i in range(ROWS):
                f.write(json.dumps({"id": i, "region": ["eu", "us", "ap"][i % 3], "amount": f"{i}.50",
                                    "note": f"row {i} " + "x" * (i % 17)}) + "\n")
        cli.ok("table", "append", self.name, rows)
        cli.ok("table", "delete", self.name, "--where", "id < 40")
        D = decimal.Decimal
        updates = [{"id": i, "region": ["eu", "us", "ap"][i % 3], "amount": D(f"{i}.75"), "note": "updated",
                    "op": "UPDATE_AFTER", "seq": 1} for i in range(100, 160)]
        deletes = [{"id": i, "region": None, "amount": None, "note": None, "op": "DELETE", "seq": 1}
                   for i in range(300, 330)]
        cli.ok(*apply_args(self.name, changes_file(workdir / "c1.parquet", updates + deletes)))
        # The apply the damaged tables get: more updates and deletes across every partition.
        self.next_changes = changes_file(workdir / "c2.parquet", [
            *({"id": i, "region": ["eu", "us", "ap"][i % 3], "amount": D("1.00"), "note": "again",
               "op": "UPDATE_AFTER", "seq": 2} for i in range(50, 70)),
            *({"id": i, "region": None, "amount": None, "note": None, "op": "DELETE", "seq": 2}
              for i in range(400, 420))])
        self.expected = self.scan()
        self.expected_filtered = self.scan("--filter", "region = 'us' AND id > 250")
        self.backup = workdir / "backup"
        shutil.copytree(cli.warehouse, self.backup)
        # What the undamaged table holds after the next apply.
        cli.ok(*apply_args(self.name, self.next_changes))
        self.expected_after_apply = self.scan()
        self.reset()
        self.files = self._files()

    def scan(self, *extra) -> list:
        return sorted(self.cli.scan_jsonl(self.name, *extra), key=lambda r: r["id"])

    def reset(self) -> None:
        shutil.rmtree(self.cli.warehouse)
        shutil.copytree(self.backup, self.cli.warehouse)

    def _files(self) -> dict[str, list[Path]]:
        """The table's current files by kind."""
        snap = self.cli.current_snapshot(self.name)
        out: dict[str, list[Path]] = collections.defaultdict(list)
        out["metadata"].append(Path(O.local_path(self._metadata_file())))
        list_path = Path(O.local_path(snap["manifest-list"]))
        out["manifest-list"].append(list_path)
        with list_path.open("rb") as f:
            for m in fastavro.reader(f):
                path = Path(O.local_path(m["manifest_path"]))
                content = m.get("content", 0)
                out["data-manifest" if content == 0 else "delete-manifest"].append(path)
                with path.open("rb") as mf:
                    for e in fastavro.reader(mf):
                        if e["status"] == 2:
                            continue
                        df = e["data_file"]
                        p = Path(O.local_path(df["file_path"]))
                        if df.get("content", 0) == 0:
                            out["data-file"].append(p)
                        elif p.suffix == ".puffin":
                            out["puffin"].append(p)
                        else:
                            out["position-delete-file"].append(p)
        return {k: sorted(set(v)) for k, v in out.items()}

    def _metadata_file(self) -> str:
        con = sqlite3.connect(f"file:{self.cli.catalog_db}?mode=ro", uri=True)
        (location,) = con.execute("SELECT metadata_location FROM iceberg_tables WHERE table_name = ?",
                                  (self.name.split(".")[1],)).fetchone()
        con.close()
        return location

    # -- the checks -------------------------------------------------------------------------

    def check_scans(self, kind: str, where: str = "") -> None:
        for extra, expected in (((), self.expected),
                                (("--filter", "region = 'us' AND id > 250"), self.expected_filtered)):
            done = self.cli.run("scan", "--table", self.name, "--format", "jsonl", *extra)
            outcome = outcome_of(done)
            if outcome == "ok":
                rows = sorted((json.loads(line) for line in done.stdout.splitlines()), key=lambda r: r["id"])
                assert rows == expected, (f"{kind}: a damaged table was read without an error but gave other rows "
                                          f"({len(rows)} rows, expected {len(expected)}) {extra} {where}")
                outcome = "correct"
            record(kind, outcome)

    def check_apply(self, kind: str, damage: Damage, where: str = "") -> None:
        before = tree_state(self.cli.warehouse)
        done = self.cli.run(*apply_args(self.name, self.next_changes))
        outcome = outcome_of(done)
        if outcome == "error":
            assert tree_state(self.cli.warehouse) == before, f"{kind}: a failed apply changed the table {where}"
            record(kind + " (apply)", "error")
            return
        # It committed: with the damaged file restored, the table must be what the undamaged table
        # gives after the same apply (a garbled entry carried into the new snapshot would show).
        damage.restore()
        assert self.scan() == self.expected_after_apply, (
            f"{kind}: apply on a damaged table committed a wrong state {where}")
        record(kind + " (apply)", "correct")
        self.reset()


@pytest.fixture(scope="module", params=[2, 3], ids=["v2", "v3"])
def table(request, tmp_path_factory) -> IcebergTable:
    return IcebergTable(tmp_path_factory.mktemp(f"iceberg-v{request.param}"), request.param)


FILE_KINDS = ["metadata", "manifest-list", "data-manifest", "delete-manifest", "data-file", "puffin",
              "position-delete-file"]


# Deletion vectors (Puffin) exist only in v3 and position delete files only in v2: the combinations
# are listed, not skipped (a skip checks nothing).
KIND_VERSIONS = [(v, k) for v in (2, 3) for k in FILE_KINDS
                 if not (v == 2 and k == "puffin") and not (v == 3 and k == "position-delete-file")]


@pytest.mark.parametrize("table,kind", KIND_VERSIONS, indirect=["table"],
                         ids=[f"v{v}-{k}" for v, k in KIND_VERSIONS])
def test_bit_flips_and_truncations(table: IcebergTable, kind: str):
    files = table.files.get(kind, [])
    assert files, f"the v{table.version} table has no {kind}"
    rng = random.Random(f"{SEED}-{table.version}-{kind}")
    for path in files[:2]:
        damage = Damage(path)
        size = len(damage.original)
        try:
            for n, offset in enumerate(offsets(size, 5, rng)):
                bit = rng.randrange(8)
                damage.flip(offset, bit)
                where = f"{path.name} ({size} bytes) byte {offset} bit {bit}"
                table.check_scans(f"{kind}: bit flip", where)
                if n < 2:
                    table.check_apply(f"{kind}: bit flip", damage, where)
                damage.restore()
            for cut in sorted({0, size // 3, size - 9, size - 1}):
                damage.truncate(max(cut, 0))
                table.check_scans(f"{kind}: truncation", f"{path.name} cut at {cut} of {size}")
                damage.restore()
        finally:
            damage.restore()
            table.reset()


def rewrite_manifest(path: Path, change, codec: str | None = None) -> bytes:
    """The manifest with `change(records)` applied, re-encoded with its own schema, metadata and codec
    (or `codec`)."""
    with path.open("rb") as f:
        reader = fastavro.reader(f)
        schema = reader.writer_schema
        codec = codec or reader.codec
        meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in reader.metadata.items()
                if not k.startswith("avro.")}
        records = list(reader)
    records = change(records)
    out = io.BytesIO()
    fastavro.writer(out, schema, records, codec=codec, metadata=meta)
    return out.getvalue()


def garble(text: str, rng: random.Random) -> str:
    i = rng.randrange(len(text) - 20, len(text) - 8)
    return text[:i] + chr(ord(text[i]) ^ 0x01) + text[i + 1:]


def test_manifests_that_decode_but_lie(table: IcebergTable):
    """A flipped bit inside a deflate block can still inflate: to entries that say something else."""
    rng = random.Random(f"{SEED}-lies-{table.version}")

    def on_delete_entries(field_change):
        def change(records):
            for r in records:
                if r["status"] != 2 and r["data_file"].get("content", 0) == 1:
                    field_change(r["data_file"])
                    break
            return records
        return change

    cases = {
        "referenced_data_file garbled": on_delete_entries(
            lambda df: df.update(referenced_data_file=garble(df["referenced_data_file"], rng))
            if df.get("referenced_data_file") else df.update(file_path=garble(df["file_path"], rng))),
        "content_offset moved": on_delete_entries(
            lambda df: df.update(content_offset=(df.get("content_offset") or 0) + 1)),
        "delete record_count changed": on_delete_entries(lambda df: df.update(record_count=df["record_count"] + 1)),
        "delete entry dropped": lambda records: records[1:] if len(records) > 1 else [],
    }
    for name, change in cases.items():
        for path in table.files.get("delete-manifest", [])[:2]:
            damage = Damage(path)
            try:
                damage.replace(rewrite_manifest(path, change))
                table.check_scans(f"decodes but lies: {name}")
                table.check_apply(f"decodes but lies: {name}", damage)
            finally:
                damage.restore()
                table.reset()
    # Data manifests: a data file's path garbled, an entry dropped.
    data_cases = {
        "data file path garbled": lambda records: [
            {**r, "data_file": {**r["data_file"], "file_path": garble(r["data_file"]["file_path"], rng)}}
            if i == 0 else r for i, r in enumerate(records)],
        "data entry dropped": lambda records: records[1:],
    }
    for name, change in data_cases.items():
        path = table.files["data-manifest"][0]
        damage = Damage(path)
        try:
            damage.replace(rewrite_manifest(path, change))
            table.check_scans(f"decodes but lies: {name}")
            table.check_apply(f"decodes but lies: {name}", damage)
        finally:
            damage.restore()
            table.reset()


def data_files_with_deletes(table: IcebergTable) -> set[str]:
    """The data files a live delete file of the table names (deletion vectors and position deletes)."""
    named = set()
    for path in table.files.get("delete-manifest", []):
        with path.open("rb") as f:
            for e in fastavro.reader(f):
                df = e["data_file"]
                if e["status"] == 2 or df.get("content", 0) != 1:
                    continue
                if df.get("referenced_data_file"):
                    named.add(df["referenced_data_file"])
                else:
                    named.update(pq.read_table(O.local_path(df["file_path"]), columns=["file_path"])
                                 .column("file_path").unique().to_pylist())
    return named


def test_path_that_is_not_utf8_is_reported_readably(table: IcebergTable):
    """A bit flip inside a data file's path can leave bytes that are not UTF-8 (CI met one at random).
    The error must still be clean text that names the path, with the bad byte shown as \\xNN, in the
    text and the JSON error line alike. The damaged path is one no delete file names, so that the scan
    gets as far as opening it (a named one stops planning first, with a message about the delete file)."""
    with_deletes = data_files_with_deletes(table)
    marker = "\u00ff"  # two bytes in UTF-8, C3 BF; the first becomes 0x8a, which starts no sequence
    target = None
    for path in table.files["data-manifest"]:
        with path.open("rb") as f:
            for i, e in enumerate(fastavro.reader(f)):
                if e["status"] != 2 and e["data_file"]["file_path"] not in with_deletes:
                    target = (path, i)
                    break
        if target:
            break
    assert target, f"every data file of the v{table.version} table has deletes: {with_deletes}"
    path, index = target

    def mark_path(records):
        df = records[index]["data_file"]
        df["file_path"] = df["file_path"][:-12] + marker + df["file_path"][-11:]
        return records

    damage = Damage(path)
    try:
        # Uncompressed, so the path's bytes are in the file as they are and can be damaged in place.
        data = rewrite_manifest(path, mark_path, codec="null")
        assert data.count(marker.encode()) == 1
        damage.replace(data.replace(marker.encode(), b"\x8a\xbf"))
        before = tree_state(table.cli.warehouse)
        for fmt in ("text", "json"):
            config = ["--catalog-config", str(table.cli.catalog_config)] if table.cli.catalog_config else []
            done = subprocess.run([str(O.LAKESYNC), "--log-format", fmt, "scan", "--table", table.name, *config],
                                  capture_output=True, env=table.cli.env, cwd=table.cli.workdir, timeout=180)
            assert done.returncode > 0, (done.returncode, done.stderr[-2000:])
            stderr = done.stderr.decode("utf-8")  # strict: a raw 0x8a would raise here
            line = stderr.strip().splitlines()[-1]
            message = line.removeprefix("lakesync: error: ") if fmt == "text" else json.loads(line)["message"]
            assert "\\x8a\\xbf" in message and ".parquet" in message, stderr
        assert tree_state(table.cli.warehouse) == before
    finally:
        damage.restore()
        table.reset()


@pytest.mark.parametrize("field,where", [
    ("sequence-number", "snapshot"), ("timestamp-ms", "snapshot"), ("manifest-list", "snapshot"),
    ("snapshot-id", "snapshot"), ("schema-id", "snapshot"), ("last-sequence-number", "table"),
    ("format-version", "table"), ("table-uuid", "table"), ("last-column-id", "table"),
    ("current-schema-id", "table"), ("location", "table"), ("last-partition-id", "table")])
@pytest.mark.parametrize("how", ["null", "missing"])
def test_required_metadata_fields(table: IcebergTable, field: str, where: str, how: str):
    path = table.files["metadata"][0]
    damage = Damage(path)
    doc = json.loads(damage.original)
    targets = doc["snapshots"] if where == "snapshot" else [doc]
    for t in targets:
        if how == "null":
            t[field] = None
        else:
            t.pop(field, None)
    try:
        damage.replace(json.dumps(doc).encode())
        table.check_scans(f"metadata: {where} {field} {how}")
        table.check_apply(f"metadata: {where} {field} {how}", damage)
        if field == "sequence-number" and how == "null":
            done = table.cli.run("scan", "--table", table.name)
            assert done.returncode == O.EXIT_CORRUPT and "sequence-number" in done.stderr, done.stderr
    finally:
        damage.restore()
        table.reset()


def names_a_live_referenced_data_file(path: Path) -> bool:
    with path.open("rb") as f:
        return any(r["status"] != 2 and r["data_file"].get("referenced_data_file") for r in fastavro.reader(f))


def test_garbled_referenced_data_file_is_named(table: IcebergTable):
    """The issue's case: the delete manifest's referenced_data_file garbled. The error names both files
    and the next apply refuses to carry the entry into a new snapshot."""
    # The first delete manifest with a live entry that names its data file (in v3 the first one may
    # hold only the entries of vectors a later commit replaced; it used to be a skip there).
    deletes = [p for p in table.files.get("delete-manifest", []) if names_a_live_referenced_data_file(Path(p))]
    assert deletes, "no delete manifest names a referenced data file in this table"
    path = deletes[0]
    original_target = {}

    def change(records):
        for r in records:
            df = r["data_file"]
            if r["status"] != 2 and df.get("referenced_data_file"):
                original_target["path"] = df["referenced_data_file"]
                df["referenced_data_file"] = df["referenced_data_file"][:-12] + "Xdamaged.parquet"
                break
        return records

    damage = Damage(path)
    try:
        damage.replace(rewrite_manifest(path, change))
        assert original_target, "no delete file names a referenced data file in this table"
        for args in (["scan", "--table", table.name], apply_args(table.name, table.next_changes)):
            rc, stderr = table.cli.fail(*args)
            assert rc == O.EXIT_CORRUPT, stderr
            assert "Xdamaged.parquet" in stderr, stderr
            assert "not live" in stderr or "rows name" in stderr, stderr
    finally:
        damage.restore()
        table.reset()


# ---------------------------------------------------------------------------------------------
# Delta logs


@pytest.fixture(scope="module")
def delta_table(tmp_path_factory):
    deltalake = pytest.importorskip("deltalake")
    root = tmp_path_factory.mktemp("delta") / "t"
    for n in range(6):
        batch = pa.table({"id": pa.array(range(n * 50, n * 50 + 50), pa.int64()),
                          "name": [f"n{i}" for i in range(50)], "part": ["a" if n % 2 else "b"] * 50})
        deltalake.write_deltalake(str(root), batch, mode="append", partition_by=["part"],
                                  configuration={"delta.enableChangeDataFeed": "true"})
    t = deltalake.DeltaTable(str(root))
    t.delete("id < 20")
    t.update({"name": "'renamed'"}, predicate="id > 200 AND id < 230")
    t.create_checkpoint()
    t = deltalake.DeltaTable(str(root))
    t.delete("id > 280")
    backup = root.parent / "backup"
    shutil.copytree(root, backup)
    return root, backup


def delta_commands(root: Path) -> list[list]:
    return [["scan", "--delta", root, "--format", "jsonl"],
            ["changes", "--source", "delta", "--table", root, "--start-version", "1", "--format", "jsonl"]]


def check_delta(cli: O.Cli, root: Path, expected: list[str], kind: str, where: str = "") -> list[str]:
    outputs = []
    for args, want in zip(delta_commands(root), expected):
        done = cli.run(*args)
        outcome = outcome_of(done)
        if outcome == "ok":
            assert sorted(done.stdout.splitlines()) == want, (
                f"{kind}: a damaged Delta log was read with other rows ({args[0]}; {where})")
            outcome = "correct"
        record(kind, outcome)
        outputs.append(done)
    return outputs


def structural_offsets(data: bytes, n: int, rng: random.Random) -> list[int]:
    """Offsets of JSON structure characters: flipping one leaves a line that is not JSON."""
    candidates = [i for i, c in enumerate(data) if chr(c) in '{}[]":,']
    return sorted(rng.sample(candidates, min(n, len(candidates))))


def path_offsets(data: bytes, rng: random.Random) -> list[int]:
    """One offset inside each add and remove path (the file a commit adds or removes)."""
    out = []
    for key in (b'"add":{"path":"', b'"remove":{"path":"'):
        start = data.find(key)
        if start >= 0:
            first = start + len(key)
            last = data.index(b'"', first) - 1
            out.append(rng.randint(first + 1, last))
    return out


def test_delta_log_damage(delta_table, tmp_path):
    """Delta commit files: empty, truncated inside a line, with a line that is not JSON, with a
    flipped structure character or a flipped character in a path they add or remove — all errors
    naming the version (or the file); damaged checkpoints (truncated): errors. A flip inside another
    value (a partition value, a statistic) is not detectable: commit files carry no checksum."""
    root, backup = delta_table
    cli = O.Cli(tmp_path)
    expected = [sorted(cli.ok(*args).splitlines()) for args in delta_commands(root)]
    log = root / "_delta_log"
    commits = sorted(p for p in log.iterdir() if p.name.endswith(".json") and p.name[0].isdigit())
    checkpoints = sorted(log.glob("*.checkpoint.parquet"))
    rng = random.Random(f"{SEED}-delta")
    try:
        for commit in commits[1:]:
            damage = Damage(commit)
            data = damage.original
            version = int(commit.name.split(".")[0])
            damage.truncate(0)
            for done in check_delta(cli, root, expected, "delta commit: empty"):
                if done.returncode != 0 and "_delta_log" in done.stderr and "version" in done.stderr:
                    assert f"version {version}" in done.stderr, done.stderr
            cuts = [i for i in range(1, len(data)) if data[i - 1] != ord("\n") and data[i] != ord("\n")]
            for cut in sorted(rng.sample(cuts, 2)):
                damage.truncate(cut)
                check_delta(cli, root, expected, "delta commit: truncated inside a line")
            for offset in structural_offsets(data, 2, rng) + path_offsets(data, rng):
                bit = rng.randrange(7)
                damage.flip(offset, bit)
                check_delta(cli, root, expected, "delta commit: bit flip (structure or path)",
                            f"{commit.name} byte {offset} bit {bit}: {data[max(0, offset - 40):offset + 20]!r}")
            damage.replace(data + b"{not json\n")
            check_delta(cli, root, expected, "delta commit: line that is not JSON")
            damage.restore()
        for cp in checkpoints:
            damage = Damage(cp)
            size = len(damage.original)
            for cut in (0, size // 3, size // 2, size - 4):
                damage.truncate(cut)
                check_delta(cli, root, expected, "delta checkpoint: truncation")
            damage.restore()
    finally:
        shutil.rmtree(root)
        shutil.copytree(backup, root)


# ---------------------------------------------------------------------------------------------
# Change streams


@pytest.mark.parametrize("bad_kind", ["INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"])
def test_change_stream_bad_value_names_file_and_row(tmp_path, bad_kind):
    """A value that does not convert, in any change kind, in the second of two input files: the error
    names that file and the row as the user counts it (1-based), and no file is left behind."""
    cli = O.Cli(tmp_path)
    cli.ok("namespace", "create", "db")
    schema = O.schema_file(tmp_path / "schema.yaml", COLUMNS, ["id"])
    cli.ok("table", "create", "db.c", "--schema", schema, "--partition", "region", "--format-version", "3")
    cli.ok("table", "append", "db.c", _jsonl(tmp_path / "base.jsonl",
                                             [{"id": i, "region": "eu", "amount": "1.00", "note": "a"}
                                              for i in range(200)]))
    first = _jsonl(tmp_path / "first.jsonl", [{"id": i, "region": "eu", "amount": "2.00", "note": "b",
                                               "op": "UPDATE_AFTER", "seq": i} for i in range(150)])
    second_rows = [{"id": 1000 + i, "region": "eu", "amount": "3.00", "note": "c", "op": "INSERT", "seq": 500 + i}
                   for i in range(10)]
    second_rows[6] = {"id": 7, "region": "eu", "amount": "not-a-number", "note": "bad", "op": bad_kind, "seq": 900}
    second = _jsonl(tmp_path / "second.jsonl", second_rows)
    before = tree_state(cli.warehouse)
    rc, stderr = cli.fail("apply", "--table", "db.c", "--changes", first, "--changes", second,
                          "--change-type-column", "op", "--sequence-number-column", "seq")
    assert rc == O.EXIT_INVALID, stderr
    line = [ln for ln in stderr.splitlines() if ln.startswith("lakesync: error:")][-1]
    assert "second.jsonl" in line and "row 7" in line and "amount" in line, line
    assert tree_state(cli.warehouse) == before, "a failed apply left files behind or changed the table"
    record("change stream: bad value", "error")


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
