#!/usr/bin/env python3
"""Creates or extends the quickstart's Delta table (Change Data Feed enabled) with deltalake.

    demo_delta.py create PATH     # version 0: 6 orders
    demo_delta.py change PATH     # one more version: updates, deletes and inserts (a MERGE)

The quickstart runs `create` and a few `change`s, syncs them into Iceberg with `lakesync run`, then
compares the Iceberg table with the Delta table's latest snapshot (see compare_demo.py).
"""
import sys

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

SCHEMA = pa.schema([
    pa.field("order_id", pa.int64(), nullable=False),
    pa.field("customer", pa.string()),
    pa.field("region", pa.string()),
    pa.field("amount", pa.float64()),
])


def create(path: str) -> None:
    rows = pa.table({
        "order_id": [1, 2, 3, 4, 5, 6],
        "customer": ["ana", "bruno", "chen", "dara", "emil", "fatou"],
        "region": ["eu", "eu", "asia", "us", "us", "africa"],
        "amount": [19.9, 5.0, 120.0, 42.1, 7.5, 63.0],
    }, schema=SCHEMA)
    write_deltalake(path, rows, mode="overwrite", partition_by=["region"],
                    configuration={"delta.enableChangeDataFeed": "true"})


def change(path: str) -> None:
    table = DeltaTable(path)
    version = table.version()
    # Each call changes different orders, so every version has inserts, updates and deletes.
    base = 100 * (version + 1)
    # Order 1 or 4 (4 moves from region us to eu: an update across partitions) and order 3.
    updates = pa.table({
        "order_id": [1 if version % 2 == 0 else 4, 3],
        "customer": ["ana", "chen"],
        "region": ["eu", "asia"],
        "amount": [float(base), float(base) + 0.5],
    }, schema=SCHEMA)
    inserts = pa.table({
        "order_id": [base + 1, base + 2],
        "customer": [f"new-{base + 1}", f"new-{base + 2}"],
        "region": ["us", "eu"],
        "amount": [1.0, 2.0],
    }, schema=SCHEMA)
    (table.merge(pa.concat_tables([updates, inserts]), "t.order_id = s.order_id", source_alias="s", target_alias="t")
     .when_matched_update_all().when_not_matched_insert_all().execute())
    DeltaTable(path).delete(f"order_id = {2 + version % 5}")


if __name__ == "__main__":
    {"create": create, "change": change}[sys.argv[1]](sys.argv[2])
