#!/usr/bin/env python3
"""Reads the quickstart's Iceberg table with pyiceberg (an independent reader, through lakesync's
SQLite catalog) and compares it with the Delta table's latest snapshot read by deltalake.

    compare_demo.py DELTA_PATH WAREHOUSE_DIR NAMESPACE.TABLE
"""
import sys
from pathlib import Path

from deltalake import DeltaTable
from pyiceberg.catalog.sql import SqlCatalog


def rows(table):
    cols = ["order_id", "customer", "region", "amount"]
    return sorted(tuple(r[c] for c in cols) for r in table.select(cols).to_pylist())


def main(delta_path: str, warehouse: str, name: str) -> int:
    delta = DeltaTable(delta_path)
    expected = rows(delta.to_pyarrow_table())
    wh = Path(warehouse).resolve()
    catalog = SqlCatalog("lakesync", uri=f"sqlite:///{wh / 'catalog.db'}", warehouse=f"file://{wh}")
    actual = rows(catalog.load_table(name).scan().to_arrow())
    print(f"pyiceberg reads {len(actual)} rows from {name}; deltalake reads {len(expected)} rows from "
          f"version {delta.version()} of {delta_path}")
    if actual != expected:
        print("MISMATCH:\n  only in Iceberg: %s\n  only in Delta: %s" %
              (sorted(set(actual) - set(expected)), sorted(set(expected) - set(actual))))
        return 1
    print("identical, row for row")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
