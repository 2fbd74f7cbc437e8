"""Generates data/duckdb_row_filter_cases.json: random rows and random filters, with the rows DuckDB selects.

DuckDB (duckdb==1.5.5 from the project's .venv) is an independent SQL engine, so its answers are the
oracle for lakesync's row filter on the subset of syntax both accept: comparisons (including value-first
and mixed numeric/decimal/date/timestamp constants), AND/OR/NOT, IS [NOT] NULL, [NOT] IN, [NOT] BETWEEN,
[NOT] LIKE 'prefix%', bare boolean columns and struct fields. Floating-point columns are left out on
purpose: DuckDB orders NaN above every number and makes NaN = NaN, where lakesync follows IEEE 754.

Run from the repository root:  .venv/bin/python tests/unit/iceberg_expr/gen_duckdb_cases.py
The seed is fixed; rerunning produces the same file.
"""

import datetime
import json
import os
import random

import duckdb

SEED = 7013
ROWS = 40
FILTERS = 400

rng = random.Random(SEED)
CHARS = ["a", "b", "é", "z", "_"]


def rand_str():
    return "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 3)))


def maybe_null(v, p=0.15):
    return None if rng.random() < p else v


EPOCH = datetime.datetime(1970, 1, 1)


def rand_ts():
    micros = rng.randint(-3, 3) * 86_400_000_000 + rng.choice(
        [0, 1, 3_599_999_999, 3_600_000_000, 86_399_999_999, -1, rng.randint(0, 86_399_999_999)]
    )
    return EPOCH + datetime.timedelta(microseconds=micros)


def rand_date():
    return datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randint(-40, 40))


def make_rows():
    rows = []
    for _ in range(ROWS):
        st = None if rng.random() < 0.2 else {"x": maybe_null(rng.randint(-5, 5)), "y": maybe_null(rand_str())}
        rows.append(
            {
                "id": maybe_null(rng.randint(-25, 25)),
                "i": maybe_null(rng.randint(-12, 12)),
                "s": maybe_null(rand_str()),
                "dt": maybe_null(rand_date()),
                "ts": maybe_null(rand_ts()),
                "dec": maybe_null(rng.randint(-300, 300)),  # unscaled, scale 2
                "b": maybe_null(rng.random() < 0.5),
                "st": st,
            }
        )
    return rows


def quote(s):
    return "'" + s.replace("'", "''") + "'"


def value(kind):
    if kind == "int":
        r = rng.random()
        if r < 0.1:
            return f"{rng.randint(-14, 14)}.5"
        if r < 0.15:
            return rng.choice(["1e20", "-1e20", "2.5e1"])
        return str(rng.randint(-27, 27))
    if kind == "str":
        return quote(rand_str())
    if kind == "date":
        if rng.random() < 0.2:
            return "TIMESTAMP '" + rand_ts().isoformat(sep=" ") + "'"
        d = rand_date().isoformat()
        return ("DATE '" + d + "'") if rng.random() < 0.5 else quote(d)
    if kind == "ts":
        if rng.random() < 0.15:
            return "DATE '" + (datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randint(-3, 3))).isoformat() + "'"
        return "TIMESTAMP '" + rand_ts().isoformat(sep=" ") + "'"
    if kind == "dec":
        if rng.random() < 0.2:
            v = rng.randint(-3000, 3000)
            return f"{'-' if v < 0 else ''}{abs(v) // 1000}.{abs(v) % 1000:03d}"
        v = rng.randint(-310, 310)
        return f"{'-' if v < 0 else ''}{abs(v) // 100}.{abs(v) % 100:02d}"
    if kind == "bool":
        return rng.choice(["TRUE", "FALSE"])
    raise ValueError(kind)


COLUMNS = [("id", "int"), ("i", "int"), ("st.x", "int"), ("s", "str"), ("st.y", "str"), ("dt", "date"),
           ("ts", "ts"), ("dec", "dec"), ("b", "bool")]
CMPS = ["=", "!=", "<>", "<", "<=", ">", ">=", "=="]


def leaf():
    name, kind = rng.choice(COLUMNS)
    form = rng.randint(0, 10)
    if form == 0:
        return name + rng.choice([" IS NULL", " IS NOT NULL"])
    if form == 1:
        values = ", ".join(value(kind) for _ in range(rng.randint(1, 4)))
        return f"{name}{rng.choice([' IN', ' NOT IN'])} ({values})"
    if form == 2 and kind != "bool":
        return f"{name}{rng.choice(['', ' NOT'])} BETWEEN {value(kind)} AND {value(kind)}"
    if form <= 4 and kind == "str":
        prefix = rand_str()
        if "_" in prefix:
            return f"{name}{rng.choice(['', ' NOT'])} LIKE {quote(prefix.replace('_', '!_') + '%')} ESCAPE '!'"
        return f"{name}{rng.choice(['', ' NOT'])} LIKE {quote(prefix + '%')}"
    if kind == "bool" and rng.random() < 0.5:
        return rng.choice(["b", "NOT b"])
    if form == 5:
        return f"{value(kind)} {rng.choice(CMPS)} {name}"
    return f"{name} {rng.choice(CMPS)} {value(kind)}"


def expr(depth):
    if depth == 0 or rng.random() < 0.35:
        return leaf()
    r = rng.randint(0, 3)
    if r == 0:
        return f"{expr(depth - 1)} AND {expr(depth - 1)}"
    if r == 1:
        return f"{expr(depth - 1)} OR {expr(depth - 1)}"
    if r == 2:
        return f"NOT ({expr(depth - 1)})"
    return f"({expr(depth - 1)} OR {expr(depth - 1)}) AND {expr(depth - 1)}"


def main():
    rows = make_rows()
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t (rn INTEGER, id BIGINT, i INTEGER, s VARCHAR, dt DATE, ts TIMESTAMP, dec DECIMAL(9, 2), "
        "b BOOLEAN, st STRUCT(x INTEGER, y VARCHAR))"
    )
    for n, r in enumerate(rows):
        dec = None if r["dec"] is None else f"{r['dec'] / 100:.2f}"
        con.execute(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, CAST(? AS DECIMAL(9, 2)), ?, ?)",
            [n, r["id"], r["i"], r["s"], r["dt"], r["ts"], dec, r["b"], r["st"]],
        )
    cases = []
    for _ in range(FILTERS):
        f = expr(3)
        selected = [row[0] for row in con.execute(f"SELECT rn FROM t WHERE {f} ORDER BY rn").fetchall()]
        cases.append({"filter": f, "selected": selected})

    def encode(r):
        out = dict(r)
        out["dt"] = None if r["dt"] is None else r["dt"].isoformat()
        out["ts"] = None if r["ts"] is None else r["ts"].isoformat()
        return out

    doc = {
        "generator": "tests/unit/iceberg_expr/gen_duckdb_cases.py",
        "oracle": f"duckdb {duckdb.__version__}",
        "seed": SEED,
        "schema": "id long, i int, s string, dt date, ts timestamp, dec decimal(9,2) (unscaled here), b boolean, "
        "st struct<x int, y string>",
        "rows": [encode(r) for r in rows],
        "cases": cases,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "duckdb_row_filter_cases.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, ensure_ascii=False, indent=1)
        fh.write("\n")
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()
