"""A long-lived local Spark session that runs snippets for the tests (see spark_runner.py).

Not a test module, and not run by the tests' own Python: spark_runner.py starts it with the Python
of .tools/spark-venv (pyspark 4.0 + the Iceberg and Delta runtime jars from scripts/setup-spark.sh),
so that pyspark never enters the shared .venv and one JVM serves a whole test session.

Protocol: one JSON request per line on stdin, {"code": <python source>, "args": {...}}. The code
runs with `spark`, `args` and the helpers below in scope and leaves its answer in `result`, which
goes back as one JSON line on the file descriptor given by --reply-fd: {"ok": true, "result": ...}
or {"ok": false, "error": <traceback>}. Replies do not use stdout because the JVM writes there too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback


def build_session(jars: list[str], scratch: str):
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("lakesync-spark-oracle")
        .config("spark.driver.memory", "2g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.jars", ",".join(jars))
        .config("spark.local.dir", os.path.join(scratch, "local"))
        .config("spark.sql.warehouse.dir", os.path.join(scratch, "spark-warehouse"))
        .config("spark.driver.extraJavaOptions",
                f"-Duser.timezone=UTC -Dderby.system.home={os.path.join(scratch, 'derby')}")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        # Parquet written for the tests to read back with pyarrow: plain int64 microseconds, never
        # INT96, so both timestamp kinds keep their exact value and their UTC-adjusted flag.
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        .config("spark.sql.extensions",
                "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions,"
                "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


# --- helpers available to snippets ----------------------------------------------------------------


def add_iceberg_catalog(spark, name: str, props: dict) -> None:
    """Registers (or re-registers under a new name) an Iceberg catalog; Spark initialises a
    catalog on first use, so a name configured at run time works like one configured at start."""
    spark.conf.set(f"spark.sql.catalog.{name}", "org.apache.iceberg.spark.SparkCatalog")
    for k, v in props.items():
        spark.conf.set(f"spark.sql.catalog.{name}.{k}", str(v))
    if props.get("type") == "jdbc" and str(props.get("uri", "")).startswith("jdbc:sqlite:"):
        _release_sqlite_locks_after_init(spark, name)


def _release_sqlite_locks_after_init(spark, name: str) -> None:
    """Works around a leak in Iceberg 1.10's JdbcCatalog.initialize: it never closes the
    DatabaseMetaData result sets of its "does the catalog table exist" and "is there an
    iceberg_type column" checks. Each found one row, so with SQLite the statement stays unfinished
    and its connection keeps a SHARED lock on the database file for as long as the catalog lives,
    and every other process (lakesync) fails to commit with "database is locked". So: initialise
    the catalog, then give it a fresh connection pool and close the one holding the leaked
    statements (later operations close their statements)."""
    spark.sql(f"SHOW NAMESPACES IN `{name}`").collect()  # initialize() runs here
    jvm = spark.sparkContext._jvm
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog(name).icebergCatalog()
    cls = catalog.getClass()
    if cls.getName() != "org.apache.iceberg.jdbc.JdbcCatalog":
        raise RuntimeError(f"catalog {name} is a {cls.getName()}; set cache-enabled=false")
    pool_field = cls.getDeclaredField("connections")
    pool_field.setAccessible(True)
    props_field = cls.getDeclaredField("catalogProperties")
    props_field.setAccessible(True)
    props = props_field.get(catalog)
    old = pool_field.get(catalog)
    pool_field.set(catalog, jvm.org.apache.iceberg.jdbc.JdbcClientPool(props.get("uri"), props))
    old.close()


def rows(df) -> list[dict]:
    """Small results (summaries, counts) as JSON-able dicts."""
    out = []
    for r in df.collect():
        out.append({k: (v if isinstance(v, (int, float, str, bool, type(None))) else str(v))
                    for k, v in r.asDict(recursive=False).items()})
    return out


def write_parquet(df, path: str) -> None:
    """Writes `df` as Parquet files under the directory `path`, for pyarrow to read."""
    df.write.mode("overwrite").parquet(path)


SPARK = None


def main() -> None:
    global SPARK
    ap = argparse.ArgumentParser()
    ap.add_argument("--reply-fd", type=int, required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--jar", action="append", default=[])
    opts = ap.parse_args()
    reply = os.fdopen(opts.reply_fd, "w", buffering=1)

    def send(doc) -> None:
        reply.write(json.dumps(doc, default=str) + "\n")
        reply.flush()

    try:
        SPARK = build_session(opts.jar, opts.scratch)
        send({"ok": True, "result": {"spark": SPARK.version}})
    except Exception:  # noqa: BLE001
        send({"ok": False, "error": traceback.format_exc()})
        return
    scope = {"spark": SPARK, "add_iceberg_catalog": add_iceberg_catalog, "rows": rows,
             "write_parquet": write_parquet}
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        local = dict(scope, args=request.get("args", {}), result=None)
        try:
            exec(compile(request["code"], "<spark snippet>", "exec"), local)
            send({"ok": True, "result": local.get("result")})
        except Exception:  # noqa: BLE001
            send({"ok": False, "error": traceback.format_exc()})
    SPARK.stop()


if __name__ == "__main__":
    main()
