"""Kill -9 torture: `lakesync apply` and `lakesync run` killed at random moments and at every writer
failpoint, over an s3:// warehouse (moto) with the catalog in PostgreSQL, then run again.

After the last successful run: every change is in the table exactly once (0 lost, 0 duplicated) and
every object under the table's prefix is referenced by the table (0 orphans: the files of killed
attempts were recorded before they were written and deleted by the next run).

LAKESYNC_TORTURE_KILLS sets the number of kills (default 105: 60 applies, 45 jobs). A kill counts only
when it interrupted a running process (exit by SIGKILL); runs that finished first are counted apart.
The figures are written to $LAKESYNC_BUILD_DIR/reliability/kill-torture.json (docs/reliability.md).
"""

from __future__ import annotations

import decimal
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402
from object_store_support import ACCESS_KEY, BUCKET, SECRET_KEY, key_of, referenced_keys  # noqa: E402

pytestmark = O.needs_lakesync

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("psycopg2")

KILLS = int(os.environ.get("LAKESYNC_TORTURE_KILLS", "105"))
APPLY_KILLS = KILLS * 4 // 7
RUN_KILLS = KILLS - APPLY_KILLS
FAILPOINTS = ["after-data-files", "before-commit", "after-commit"]
COLUMNS = [
    {"name": "id", "type": "long", "required": True},
    {"name": "region", "type": "string", "required": False},
    {"name": "amount", "type": "decimal(12, 2)", "required": False},
]
D = decimal.Decimal


def catalog_props(postgres_db: str, moto: dict, warehouse: str) -> dict:
    return {"type": "sql", "uri": postgres_db, "warehouse": warehouse, "s3.endpoint": moto["endpoint"],
            "s3.access-key-id": ACCESS_KEY, "s3.secret-access-key": SECRET_KEY, "s3.region": "us-east-1"}


def batch_file(path: Path, b: int) -> Path:
    rows = [{"id": 1000 * b + i, "region": ["eu", "us", "ap"][i % 3], "amount": D(f"{b}.01"), "op": "INSERT",
             "seq": b} for i in range(20)]
    rows.append({"id": b, "region": ["eu", "us", "ap"][b % 3], "amount": D(f"{b}.99"), "op": "UPDATE_AFTER", "seq": b})
    rows.append({"id": 100 + b, "region": None, "amount": None, "op": "DELETE", "seq": b})
    schema = pa.schema([("id", pa.int64()), ("region", pa.string()), ("amount", pa.decimal128(12, 2)),
                        ("op", pa.string()), ("seq", pa.int64())])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def expected_rows(batches: int) -> dict[int, str]:
    rows = {i: f"{i}.00" for i in range(300)}
    for b in range(1, batches + 1):
        for i in range(20):
            rows[1000 * b + i] = f"{b}.01"
        rows[b] = f"{b}.99"
        rows.pop(100 + b, None)
    return rows


class Killer:
    """Starts a command and kills it: at a failpoint, or after a random share of a typical run."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.kills = 0
        self.finished_first = 0
        self.by_failpoint = {f: 0 for f in FAILPOINTS}
        self.random_kills = 0

    def attempt(self, cmd: list, env: dict, typical_s: float, cwd: Path) -> None:
        failpoint = self.rng.choice(FAILPOINTS + [None, None, None])
        run_env = dict(env)
        if failpoint:
            run_env["LAKESYNC_FAILPOINT"] = failpoint
        proc = subprocess.Popen([str(O.LAKESYNC), *map(str, cmd)], env=run_env, cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        if not failpoint:
            # Not synchronisation: the moment of the kill is the experiment's random variable.
            time.sleep(self.rng.uniform(0.05, 1.0) * typical_s)
            proc.kill()
        out, err = proc.communicate(timeout=300)
        if proc.returncode == -9:
            self.kills += 1
            if failpoint:
                self.by_failpoint[failpoint] += 1
            else:
                self.random_kills += 1
        else:
            assert proc.returncode == 0, f"{cmd[0]} failed without being killed: {err[-3000:]}"
            self.finished_first += 1


def timed(cmd: list, env: dict, cwd: Path) -> float:
    started = time.monotonic()
    done = subprocess.run([str(O.LAKESYNC), *map(str, cmd)], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return time.monotonic() - started


def orphans(moto: dict, metadata_location: str) -> set[str]:
    client = moto["client"]

    def read(key: str) -> bytes:
        return client.get_object(Bucket=BUCKET, Key=key)["Body"].read()

    prefix = key_of(metadata_location).split("/metadata/")[0] + "/"
    keys = set()
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        keys.update(o["Key"] for o in page.get("Contents", []) if not o["Key"].endswith("/"))
    return keys - referenced_keys(read, metadata_location)


def metadata_location(postgres_db: str, table: str) -> str:
    import psycopg2

    con = psycopg2.connect(postgres_db)
    cur = con.cursor()
    cur.execute("SELECT metadata_location FROM iceberg_tables WHERE table_name = %s", (table,))
    (location,) = cur.fetchone()
    con.close()
    return location


def test_kill_minus_nine_torture(postgres_db, moto_server, tmp_path):
    rng = random.Random(14)
    figures = {}
    warehouse = f"s3://{BUCKET}/torture-{uuid.uuid4().hex[:10]}"
    config = O.write_yaml(tmp_path / "catalog.yaml", {"catalog_name": "torture",
                                                      "catalog_properties": catalog_props(postgres_db, moto_server,
                                                                                          warehouse)})
    cli = O.Cli(tmp_path, catalog_config=config)
    env = dict(cli.env)
    cli.ok("namespace", "create", "db")
    schema = O.schema_file(tmp_path / "schema.yaml", COLUMNS, ["id"])
    cli.ok("table", "create", "db.t", "--schema", schema, "--partition", "region", "--format-version", "3")
    base = tmp_path / "base.jsonl"
    base.write_text("".join(json.dumps({"id": i, "region": ["eu", "us", "ap"][i % 3], "amount": f"{i}.00"}) + "\n"
                            for i in range(300)))
    cli.ok("table", "append", "db.t", base)

    def apply_cmd(b: int) -> list:
        return ["apply", "--table", "db.t", "--changes", batch_file(tmp_path / f"b{b}.parquet", b),
                "--change-type-column", "op", "--sequence-number-column", "seq", "--equality-columns", "id",
                "--sink-id", "torture", "--source-position", str(b), "--catalog-config", config]

    # -- apply ---------------------------------------------------------------------------------
    typical = statistics.median(timed(apply_cmd(b), env, tmp_path) for b in (1, 2))
    killer = Killer(rng)
    batch = 3
    while killer.kills < APPLY_KILLS:
        killer.attempt(apply_cmd(batch), env, typical, tmp_path)
        if rng.random() < 0.3:  # sometimes move on: the next batch's run must first finish this one's
            cli.ok(*apply_cmd(batch)[:-2])
            batch += 1
    for b in range(3, batch + 1):
        cli.ok(*apply_cmd(b)[:-2])  # reruns of committed positions are skips
    got = {r["id"]: r["amount"] for r in cli.scan_jsonl("db.t")}
    assert len(cli.scan_jsonl("db.t")) == len(got), "duplicated rows"
    assert got == expected_rows(batch), "lost or wrong rows after the kills"
    left = orphans(moto_server, metadata_location(postgres_db, "t"))
    figures["apply"] = {"kills": killer.kills, "random_kills": killer.random_kills, "by_failpoint": killer.by_failpoint,
                        "finished_before_the_kill": killer.finished_first, "batches": batch,
                        "typical_run_s": round(typical, 2), "orphans_after_next_run": len(left)}
    assert not left, f"{len(left)} orphan objects: {sorted(left)[:10]}"

    # -- run (a Delta CDF job) ------------------------------------------------------------------
    deltalake = pytest.importorskip("deltalake")
    delta = tmp_path / "delta"
    version = [0]

    def delta_change() -> None:
        n = version[0]
        deltalake.write_deltalake(str(delta), pa.table({"id": pa.array(range(n * 10, n * 10 + 10), pa.int64()),
                                                        "v": [f"v{n}"] * 10}),
                                  mode="append", configuration={"delta.enableChangeDataFeed": "true"})
        if n % 3 == 2:
            deltalake.DeltaTable(str(delta)).delete(f"id = {n * 10 - 5}")
        version[0] += 1

    delta_change()
    job = O.write_yaml(tmp_path / "job.yaml", {
        "name": "torture-job",
        "source": {"type": "delta_lake_cdc", "table": str(delta), "start_version": 0, "initial_snapshot": True},
        "sink": {"table": "db.job", "equality_columns": ["id"], "catalog_name": "torture",
                 "catalog_properties": catalog_props(postgres_db, moto_server, warehouse),
                 "table_properties": {"format-version": "3"}}})
    typical = timed(["run", job, "--once"], env, tmp_path)
    killer_run = Killer(rng)
    while killer_run.kills < RUN_KILLS:
        if rng.random() < 0.5:
            delta_change()
        killer_run.attempt(["run", job, "--once"], env, typical, tmp_path)
    cli.ok("run", job, "--once", config=False)
    got = sorted(r["id"] for r in cli.scan_jsonl("db.job"))
    want = sorted(deltalake.DeltaTable(str(delta)).to_pyarrow_table().column("id").to_pylist())
    assert got == want, "the job's target differs from the Delta table after the kills"
    left = orphans(moto_server, metadata_location(postgres_db, "job"))
    figures["run"] = {"kills": killer_run.kills, "random_kills": killer_run.random_kills,
                      "by_failpoint": killer_run.by_failpoint, "finished_before_the_kill": killer_run.finished_first,
                      "delta_versions": version[0], "typical_run_s": round(typical, 2),
                      "orphans_after_next_run": len(left)}
    assert not left, f"{len(left)} orphan objects: {sorted(left)[:10]}"

    out = Path(os.environ.get("LAKESYNC_BUILD_DIR", "build")) / "reliability"
    out.mkdir(parents=True, exist_ok=True)
    (out / "kill-torture.json").write_text(json.dumps(figures, indent=2))
    print(f"\nkill torture: {json.dumps(figures)}")
