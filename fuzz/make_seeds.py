"""Seed corpora for the fuzz harnesses, generated the way the tests generate their data.

Writes one folder per harness under --out:
  table_metadata, manifest, manifest_list, puffin, deletion_vector: from Iceberg v2 and v3 tables that
      `lakesync` creates, appends to and deletes from (position deletes, deletion vectors, a partition
      spec, a schema change);
  delta_log, delta_checkpoint: from a Delta table deltalake writes (several commits, a checkpoint);
  z85: Z85 texts (Delta's inline deletion vectors and DV ids);
  filter: filter expressions like the ones the tests pass to --filter / --where;
  job_yaml: the example job files.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

Z85_CHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

FILTERS = [
    "c_2 > 10", "c_3 BETWEEN 1 AND 100", "c_12 = 'bruno'", "c_12 LIKE 'br%'", "c_1 IS NULL",
    "c_5 IS NOT NAN", "c_6 >= 14.20", "c_7 = DATE '2024-01-31'", "c_9 < TIMESTAMP '2024-01-31T22:31:08.123456'",
    "address.city IN ('Oslo', 'Rome')", '"odd name" != \'x\'', "NOT (c_2 = 1 OR c_3 <> 2) AND c_4 < 1.5e3",
    "c_13 = 'f79c3e09-677c-4bbd-a479-3f349cb785e7'", "c_2 NOT IN (1, 2, 3)", "`odd name` IS NOT NULL",
]


def z85_encode(data: bytes) -> str:
    assert len(data) % 4 == 0
    out = []
    for i in range(0, len(data), 4):
        (value,) = struct.unpack(">I", data[i:i + 4])
        chunk = []
        for _ in range(5):
            chunk.append(Z85_CHARS[value % 85])
            value //= 85
        out.extend(reversed(chunk))
    return "".join(out)


def run(lakesync: Path, env: dict, *args: str) -> None:
    subprocess.run([str(lakesync), *args], check=True, env=env, capture_output=True, text=True)


def iceberg_tables(lakesync: Path, work: Path) -> Path:
    env = dict(os.environ, LAKESYNC_WAREHOUSE=str(work / "wh"))
    rows = work / "rows.jsonl"
    with rows.open("w") as f:
        for i in range(200):
            f.write(json.dumps({"id": i, "region": ["eu", "us", "ap"][i % 3], "amount": f"{i}.25",
                                "ts": f"2024-01-{1 + i % 28:02d}T10:00:00"}) + "\n")
    schema = work / "schema.yaml"
    schema.write_text("fields:\n  - {name: id, type: long, required: true}\n  - {name: region, type: string}\n"
                      "  - {name: amount, type: 'decimal(10, 2)'}\n  - {name: ts, type: timestamp}\n"
                      "identifier-fields: [id]\n")
    run(lakesync, env, "namespace", "create", "seed")
    for version in ("2", "3"):
        table = f"seed.t{version}"
        run(lakesync, env, "table", "create", table, "--schema", str(schema), "--partition", "region",
            "--partition", "day(ts)", "--format-version", version)
        run(lakesync, env, "table", "append", table, str(rows))
        run(lakesync, env, "table", "delete", table, "--where", "id < 20")
        run(lakesync, env, "table", "delete", table, "--where", "amount > 150")
        run(lakesync, env, "table", "append", table, str(rows))
    return work / "wh"


def delta_table(work: Path) -> Path | None:
    try:
        import pyarrow as pa
        from deltalake import DeltaTable, write_deltalake
    except ImportError:
        return None
    path = work / "delta"
    for n in range(4):
        batch = pa.table({"id": list(range(n * 10, n * 10 + 10)), "name": [f"n{i}" for i in range(10)],
                          "part": ["a" if n % 2 else "b"] * 10})
        write_deltalake(str(path), batch, mode="append", partition_by=["part"],
                        configuration={"delta.enableChangeDataFeed": "true"})
    table = DeltaTable(str(path))
    table.delete("id < 5")
    table.update({"name": "'renamed'"}, predicate="id = 12")
    table.create_checkpoint()
    return path


def copy_into(files, folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    n = 0
    for f in files:
        shutil.copy(f, folder / f"{n:04d}-{Path(f).name[-40:]}")
        n += 1
    return n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lakesync", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        wh = iceberg_tables(args.lakesync.resolve(), work)
        files = sorted(p for p in wh.rglob("*") if p.is_file())
        copy_into([p for p in files if p.name.endswith(".metadata.json")], out / "table_metadata")
        copy_into([p for p in files if p.name.startswith("snap-")], out / "manifest_list")
        copy_into([p for p in files if p.suffix == ".avro" and not p.name.startswith("snap-")], out / "manifest")
        puffins = [p for p in files if p.suffix == ".puffin"]
        copy_into(puffins, out / "puffin")
        # Deletion vector blobs: the bytes between the header magic and the footer, one per blob.
        dv_dir = out / "deletion_vector"
        dv_dir.mkdir(parents=True, exist_ok=True)
        n = 0
        for p in puffins:
            data = p.read_bytes()
            payload_size = struct.unpack("<i", data[-12:-8])[0]
            footer = json.loads(data[-12 - payload_size:-12])
            for blob in footer.get("blobs", []):
                (dv_dir / f"dv-{n:04d}").write_bytes(data[blob["offset"]:blob["offset"] + blob["length"]])
                n += 1
        delta = delta_table(work)
        if delta is not None:
            log = sorted((delta / "_delta_log").iterdir())
            copy_into([p for p in log if p.suffix == ".json" and p.name[0].isdigit()], out / "delta_log")
            copy_into([p for p in log if p.name.endswith(".checkpoint.parquet")], out / "delta_checkpoint")
    z85 = out / "z85"
    z85.mkdir(parents=True, exist_ok=True)
    for n, data in enumerate([bytes(range(16)), b"\x00" * 20, bytes([0xFF, 0x10, 0x20, 0x30] * 7)]):
        (z85 / f"z85-{n}").write_text(z85_encode(data))
    filters = out / "filter"
    filters.mkdir(parents=True, exist_ok=True)
    for n, text in enumerate(FILTERS):
        (filters / f"filter-{n:02d}").write_text(text)
    copy_into(sorted((REPO / "examples").glob("*.yaml")), out / "job_yaml")
    for folder in sorted(out.iterdir()):
        print(f"{folder.name}: {len(list(folder.iterdir()))} seed files")


if __name__ == "__main__":
    main()
