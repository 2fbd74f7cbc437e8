"""Spark as an oracle, from the tests' own Python (the shared .venv, which has no pyspark).

`SparkProcess` starts tests/spark/spark_server.py with .tools/spark-venv/bin/python: one local Spark
session (local[2], 2 GB driver, no UI) with the Iceberg and Delta runtimes, kept for the whole test
session because JVM start-up dominates everything else. Snippets of PySpark code are sent to it and
small JSON results come back; row sets come back as Parquet files that the tests read with pyarrow
and normalise with tests/interop/oracles.py like every other reader's output.

`scripts/setup-spark.sh` installs the venv and the jars. scripts/test.sh (CI) and scripts/test-spark.sh
set LAKESYNC_SPARK_TESTS=1, under which a missing piece fails the tests; without it (a plain local
`pytest tests`) `needs_spark` skips with the reason, an environment skip tests/expected_skips.py lists
and the skip guard refuses under CI.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOLS = Path(os.environ.get("LAKESYNC_SPARK_TOOLS", REPO / ".tools"))
SPARK_PYTHON = TOOLS / "spark-venv" / "bin" / "python"
JAR_DIR = TOOLS / "spark-jars"
JAVA_HOME = os.environ.get("LAKESYNC_SPARK_JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64")
SERVER = Path(__file__).with_name("spark_server.py")


OPT_IN = "LAKESYNC_SPARK_TESTS"


def opted_in() -> bool:
    return os.environ.get(OPT_IN) == "1"


def missing() -> str | None:
    """Why Spark cannot run here, or None. The suite is opt-in (scripts/test.sh and
    scripts/test-spark.sh set LAKESYNC_SPARK_TESTS=1) so that a local `pytest tests` needs no Spark."""
    if os.environ.get(OPT_IN) != "1":
        return f"the Spark suite is opt-in: run scripts/test-spark.sh (or set {OPT_IN}=1)"
    if not SPARK_PYTHON.exists():
        return f"{SPARK_PYTHON} is absent: run scripts/setup-spark.sh (or scripts/test-spark.sh)"
    jars = sorted(JAR_DIR.glob("*.jar"))
    for needed in ("iceberg-spark-runtime", "delta-spark", "delta-storage"):
        if not any(j.name.startswith(needed) for j in jars):
            return f"no {needed} jar in {JAR_DIR}: run scripts/setup-spark.sh"
    if not Path(JAVA_HOME, "bin", "java").exists():
        return f"no Java at {JAVA_HOME} (set LAKESYNC_SPARK_JAVA_HOME)"
    return None


# Opted in, a missing piece is not a skip: the `spark` fixture fails the tests with the reason.
needs_spark = pytest.mark.skipif(missing() is not None and not opted_in(),
                                 reason=f"Spark oracle unavailable: {missing()}")


class SparkError(RuntimeError):
    pass


class SparkProcess:
    """One Spark session in a child process. Not thread-safe; one request at a time."""

    def __init__(self, scratch: Path, start_timeout: float = 600):
        reason = missing()
        if reason:
            raise SparkError(reason)
        self.scratch = Path(scratch)
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.log_path = self.scratch / "spark.log"
        read_fd, write_fd = os.pipe()
        env = dict(os.environ, JAVA_HOME=JAVA_HOME, TZ="UTC", PYSPARK_PYTHON=str(SPARK_PYTHON),
                   PYSPARK_DRIVER_PYTHON=str(SPARK_PYTHON), SPARK_LOCAL_IP="127.0.0.1")
        env.pop("PYTHONPATH", None)
        env.pop("SPARK_HOME", None)
        cmd = [str(SPARK_PYTHON), str(SERVER), "--reply-fd", str(write_fd), "--scratch", str(self.scratch)]
        for jar in sorted(JAR_DIR.glob("*.jar")):
            cmd += ["--jar", str(jar)]
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=self._log, stderr=subprocess.STDOUT,
                                     env=env, pass_fds=(write_fd,), cwd=self.scratch)
        os.close(write_fd)
        self._replies = os.fdopen(read_fd, "r")
        started = time.monotonic()
        hello = self._reply(start_timeout)
        self.start_seconds = time.monotonic() - started
        self.version = hello["spark"]

    def _log_tail(self, n: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def _reply(self, timeout: float) -> Any:
        ready, _, _ = select.select([self._replies], [], [], timeout)
        if not ready:
            raise SparkError(f"Spark gave no answer in {timeout:.0f}s; log tail:\n{self._log_tail()}")
        line = self._replies.readline()
        if not line:
            raise SparkError(f"the Spark process ended (exit {self.proc.poll()}); log tail:\n{self._log_tail()}")
        doc = json.loads(line)
        if not doc["ok"]:
            raise SparkError(doc["error"])
        return doc["result"]

    def run(self, code: str, timeout: float = 900, **args: Any) -> Any:
        """Runs `code` (PySpark, with `spark` and `args` in scope) and returns what it put in `result`."""
        if self.proc.poll() is not None:
            raise SparkError(f"the Spark process has ended (exit {self.proc.returncode}):\n{self._log_tail()}")
        self.proc.stdin.write((json.dumps({"code": code, "args": args}) + "\n").encode())
        self.proc.stdin.flush()
        return self._reply(timeout)

    def sql(self, *statements: str) -> list[dict]:
        """Runs statements in order; returns the rows of the last (small results only)."""
        return self.run("for s in args['statements'][:-1]:\n    spark.sql(s).collect()\n"
                        "result = rows(spark.sql(args['statements'][-1]))", statements=list(statements))

    def query_to_parquet(self, query: str, path: Path) -> Path:
        """Runs a SELECT (or `spark.read...` when `query` starts with 'df:') and writes its rows as
        Parquet under the directory `path`."""
        code = ("df = eval(args['query'][3:]) if args['query'].startswith('df:') else spark.sql(args['query'])\n"
                "write_parquet(df, args['path'])\n")
        self.run(code, query=query, path=str(path))
        return Path(path)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=60)
            except (subprocess.TimeoutExpired, BrokenPipeError):
                self.proc.kill()
                self.proc.wait()
        self._replies.close()
        self._log.close()


def read_parquet_dir(path: Path):
    """The rows Spark wrote under `path` as one pyarrow Table (Spark's part files, any order)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    parts = sorted(Path(path).glob("part-*.parquet"))
    tables = [pq.read_table(p) for p in parts]
    if not tables:
        raise AssertionError(f"Spark wrote no Parquet files under {path}")
    return pa.concat_tables(tables, promote_options="none") if len(tables) > 1 else tables[0]
