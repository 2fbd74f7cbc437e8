"""Generated table data shared by the heavy oracle suites (tests/spark, tests/trino; not a test
module): one column set with every Iceberg type those engines can read, a seeded row generator in
oracles.py's canonical form, and small helpers to pick and change columns of those rows.

Expected values come from here (the data a test generated and the changes it mirrored in Python),
never from lakesync: each engine is compared with them, and lakesync with both.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import random
import uuid

import oracles as O

# Spark 4.0 has no time type and Iceberg's Spark runtime refuses `time` columns, so the column set is
# that of tests/interop without `tm`; uuid and fixed exist only in tables lakesync creates (Spark's
# DDL cannot declare them; Spark reads them as string and binary; Trino reads and writes both).
INNER = {"type": "struct", "fields": [
    {"name": "x", "type": "double", "required": False},
    {"name": "d", "type": "date", "required": False}]}
STRUCT = {"type": "struct", "fields": [
    {"name": "a", "type": "int", "required": False},
    {"name": "b", "type": "string", "required": False},
    {"name": "inner", "type": INNER, "required": False}]}
KV = {"type": "struct", "fields": [{"name": "k", "type": "string", "required": False},
                                   {"name": "v", "type": "long", "required": False}]}

COLUMNS = [
    {"name": "id", "type": "long", "required": True},
    {"name": "b", "type": "boolean"},
    {"name": "i", "type": "int"},
    {"name": "l", "type": "long"},
    {"name": "f", "type": "float"},
    {"name": "d", "type": "double"},
    {"name": "dec9", "type": "decimal(9, 2)"},
    {"name": "dec38", "type": "decimal(38, 10)"},
    {"name": "dt", "type": "date"},
    {"name": "ts", "type": "timestamp"},
    {"name": "tstz", "type": "timestamptz"},
    {"name": "s", "type": "string"},
    {"name": "cat", "type": "string"},
    {"name": "u", "type": "uuid"},
    {"name": "fx", "type": "fixed[8]"},
    {"name": "bin", "type": "binary"},
    {"name": "st", "type": STRUCT},
    {"name": "li", "type": {"type": "list", "element": "int", "element-required": False}},
    {"name": "ls", "type": {"type": "list", "element": KV, "element-required": False}},
    {"name": "mp", "type": {"type": "map", "key": "string", "value": "long", "value-required": False}},
]
for _c in COLUMNS:
    _c.setdefault("required", False)
INDEX = {c["name"]: k for k, c in enumerate(COLUMNS)}

MICROS_PER_HOUR = 3_600_000_000
MICROS_PER_DAY = 24 * MICROS_PER_HOUR


def _micros(text: str) -> int:
    return (dt.datetime.fromisoformat(text) - O.EPOCH) // dt.timedelta(microseconds=1)


# Small pools so that identity/truncate/day partitionings make a handful of partitions, with values
# on both sides of the epoch (negative day ordinals) and of a leap day.
DATE_POOL = [dt.date(1969, 12, 31), dt.date(1970, 1, 1), dt.date(1999, 12, 31), dt.date(2024, 2, 29)]
DAY_POOL = [_micros(t) for t in ("1969-12-31T00:00:00", "1970-01-02T00:00:00", "2000-01-01T00:00:00",
                                 "2024-02-29T00:00:00")]
CATEGORIES = ["", "ab", "abc", "abd", "日本語", "日本", "zz", "ünï"]
TEXT_CHARS = "abcxyz é日本🙂\t\"\\'"


def _decimal(r: random.Random, precision: int, scale: int) -> decimal.Decimal:
    bound = 10 ** precision - 1
    n = r.choice([bound, -bound, 0]) if r.random() < 0.05 else r.randint(-bound, bound)
    return decimal.Decimal(n).scaleb(-scale, context=decimal.Context(prec=100))


def generate_rows(n: int, seed: int, first_id: int = 0, ids: list[int] | None = None) -> list[tuple]:
    """Canonical rows (oracles.py) for COLUMNS, ids first_id.. (or `ids`); ~10% nulls per column."""
    r = random.Random(seed)

    def maybe(make, p: float = 0.1):
        return None if r.random() < p else make()

    def double():
        if r.random() < 0.08:
            return r.choice([O.NAN, math.inf, -math.inf, 0.0, 5e-324, 1.7976931348623157e308])
        return r.uniform(-1e3, 1e3)

    def single():
        if r.random() < 0.08:
            return r.choice([O.NAN, math.inf, -math.inf, 0.0])
        return O._f32(r.uniform(-1e6, 1e6))

    def text(k: int = 8) -> str:
        return "".join(r.choice(TEXT_CHARS) for _ in range(r.randint(0, k)))

    out = []
    for k in range(n):
        inner = maybe(lambda: (maybe(double), maybe(lambda: r.choice(DATE_POOL))))
        out.append((
            ids[k] if ids is not None else first_id + k,
            maybe(lambda: r.random() < 0.5),
            maybe(lambda: r.randint(-500, 500)),
            maybe(lambda: r.choice([r.randint(-2**63, 2**63 - 1), -2**63, 2**63 - 1, 0])),
            maybe(single),
            maybe(double),
            maybe(lambda: _decimal(r, 9, 2)),
            maybe(lambda: _decimal(r, 38, 10)),
            maybe(lambda: r.choice(DATE_POOL) + dt.timedelta(days=r.randint(0, 2))),
            maybe(lambda: r.choice(DAY_POOL) + r.randrange(2 * MICROS_PER_DAY)),
            maybe(lambda: r.choice(DAY_POOL) + r.randrange(MICROS_PER_DAY)),
            maybe(text),
            maybe(lambda: r.choice(CATEGORIES)),
            maybe(lambda: uuid.UUID(int=r.getrandbits(128))),
            maybe(lambda: r.randbytes(8)),
            maybe(lambda: r.randbytes(r.randint(0, 12))),
            maybe(lambda: (maybe(lambda: r.randint(-9, 9)), maybe(text), inner)),
            maybe(lambda: tuple(maybe(lambda: r.randint(-2**31, 2**31 - 1)) for _ in range(r.randint(0, 4)))),
            maybe(lambda: tuple(maybe(lambda: (maybe(text), maybe(lambda: r.randint(-99, 99))))
                                for _ in range(r.randint(0, 3)))),
            maybe(lambda: tuple(sorted({text(3): maybe(lambda: r.randint(-5, 5))
                                        for _ in range(r.randint(0, 3))}.items()))),
        ))
    return out


def col(row: tuple, name: str):
    return row[INDEX[name]]


def project(rows: list[tuple], columns: list[dict]) -> list[tuple]:
    """Rows of COLUMNS cut down to `columns` (a subset, in COLUMNS order)."""
    keep = [INDEX[c["name"]] for c in columns]
    return [tuple(r[k] for k in keep) for r in rows]


def with_values(row: tuple, **values) -> tuple:
    out = list(row)
    for name, v in values.items():
        out[INDEX[name]] = v
    return tuple(out)


def canonical(rows: list[tuple], columns: list[dict]) -> list[tuple]:
    return O.normalise_rows(rows, columns, "python")
