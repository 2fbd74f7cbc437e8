"""Trino as an oracle (not a test module): one Trino server on loopback for the whole pytest session,
reached with the `trino` Python client (pinned in requirements/test.txt).

`scripts/setup-trino.sh` installs the server (the io.trino:trino-server tarball from Maven Central,
checksums verified) into .tools/trino-server-<V> and records the Java it runs on in
.tools/trino-java-home. Without them, without the client, or without LAKESYNC_TRINO_TESTS=1 (which
scripts/test-trino.sh sets), `missing()` says why and the suite skips, so scripts/test.sh stays fast.

The server is a single coordinator that also runs tasks, listening on 127.0.0.1 only, with a 2 GB
heap and 1 GB per query (the development machines have 2 cores shared by several people). Catalogs
are created per test with `CREATE CATALOG ... USING iceberg` (dynamic catalog management, kept in
memory): each points at one `lakesync catalog serve` over the test's own warehouse, with Trino's
native local file system so that it reads and writes the `file://` locations lakesync uses.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import oracles as O

REPO = Path(__file__).resolve().parents[2]
TOOLS = Path(os.environ.get("LAKESYNC_TRINO_TOOLS", REPO / ".tools"))
VERSION = "476"  # scripts/setup-trino.sh pins the same
SERVER_DIR = TOOLS / f"trino-server-{VERSION}"
JAVA_HOME_FILE = TOOLS / "trino-java-home"
OPT_IN = "LAKESYNC_TRINO_TESTS"
HEAP = "2G"
QUERY_MEMORY = "1GB"


def java_home() -> Path | None:
    if os.environ.get("LAKESYNC_TRINO_JAVA_HOME"):
        return Path(os.environ["LAKESYNC_TRINO_JAVA_HOME"])
    if JAVA_HOME_FILE.exists():
        return Path(JAVA_HOME_FILE.read_text().strip())
    return None


def missing() -> str | None:
    """Why Trino cannot run here, or None."""
    if os.environ.get(OPT_IN) != "1":
        return f"the Trino suite is opt-in: run scripts/test-trino.sh (or set {OPT_IN}=1)"
    if not (SERVER_DIR / ".installed").exists():
        return f"{SERVER_DIR} is not installed: run scripts/setup-trino.sh (or scripts/test-trino.sh)"
    home = java_home()
    if home is None or not (home / "bin" / "java").exists():
        return f"no Java for Trino (see {JAVA_HOME_FILE}, or set LAKESYNC_TRINO_JAVA_HOME)"
    try:
        import trino  # noqa: F401
    except ImportError:
        return "the trino Python client is not installed (requirements/test.txt: scripts/setup.sh --test)"
    return None


class TrinoError(RuntimeError):
    pass


def _die_with_parent() -> None:
    """Runs in the child before exec: the kernel sends it SIGTERM when pytest dies, however it dies,
    so no Trino outlives the suite."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class TrinoServer:
    """One Trino server process. `close()` stops it (SIGTERM, then SIGKILL after 60 s)."""

    def __init__(self, scratch: Path, start_timeout: float = 600):
        reason = missing()
        if reason:
            raise TrinoError(reason)
        self.scratch = Path(scratch)
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.log_path = self.scratch / "server.log"
        self.proc = None
        started = time.monotonic()
        for attempt in range(3):  # a free port found here can be taken before Trino binds it
            self.port = O.free_port()
            self._start()
            if self._wait_ready(start_timeout):
                break
            if "Address already in use" not in self._log_tail(400) or attempt == 2:
                tail = self._log_tail()
                self.close()
                raise TrinoError(f"Trino did not start (log: {self.log_path}):\n{tail}")
            self.close()
        self.start_seconds = time.monotonic() - started
        self.url = f"http://127.0.0.1:{self.port}"
        self.version = self.query("SELECT node_version FROM system.runtime.nodes")[0][0]

    def _start(self) -> None:
        etc = self.scratch / "etc"
        data = self.scratch / "data"
        etc.mkdir(exist_ok=True)
        data.mkdir(exist_ok=True)
        config = {
            "coordinator": "true",
            "node-scheduler.include-coordinator": "true",
            "http-server.http.port": str(self.port),
            "discovery.uri": f"http://127.0.0.1:{self.port}",
            "node.environment": "lakesync_test",
            # Listen on loopback only, and tell the (one-node) cluster to reach itself there.
            "node.bind-ip": "127.0.0.1",
            "node.internal-address": "127.0.0.1",
            "plugin.dir": str(SERVER_DIR / "plugin"),
            # Catalogs are created and dropped by the tests (CREATE CATALOG), kept in memory only.
            "catalog.management": "dynamic",
            "catalog.store": "memory",
            "query.max-memory": QUERY_MEMORY,
            "query.max-memory-per-node": QUERY_MEMORY,
            "log.path": str(self.log_path),
        }
        (etc / "config.properties").write_text("".join(f"{k}={v}\n" for k, v in config.items()))
        (etc / "log.properties").write_text("io.trino=INFO\n")
        java = java_home() / "bin" / "java"
        cmd = [str(java), f"-Xmx{HEAP}", "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError",
               "-XX:-OmitStackTraceInFastThrow", "-XX:ReservedCodeCacheSize=256M", "-Djdk.attach.allowAttachSelf=true",
               "--enable-native-access=ALL-UNNAMED", "-Duser.timezone=UTC",
               f"-Dconfig={etc / 'config.properties'}", f"-Dlog.levels-file={etc / 'log.properties'}",
               "-cp", str(SERVER_DIR / "lib" / "*"), "io.trino.server.TrinoServer"]
        self._stdout = open(self.scratch / "stdout.log", "ab")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "JAVA_TOOL_OPTIONS"))}
        self.proc = subprocess.Popen(cmd, cwd=data, stdout=self._stdout, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env, preexec_fn=_die_with_parent)

    def _wait_ready(self, timeout: float) -> bool:
        """Polls /v1/info until the server says it has started; False when the process ended."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/v1/info", timeout=5) as r:
                    if json.load(r).get("starting") is False:
                        return True
            except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
                pass
            time.sleep(0.5)
        raise TrinoError(f"Trino did not start within {timeout:.0f}s; log tail:\n{self._log_tail()}")

    def _log_tail(self, n: int = 60) -> str:
        out = []
        for path in (self.scratch / "stdout.log", self.log_path):
            try:
                out += path.read_text(errors="replace").splitlines()[-n:]
            except OSError:
                pass
        return "\n".join(out)

    def connect(self, catalog: str | None = None, schema: str | None = None):
        import trino

        return trino.dbapi.connect(host="127.0.0.1", port=self.port, user="lakesync", http_scheme="http",
                                   catalog=catalog, schema=schema, timezone="UTC",
                                   request_timeout=600)

    def query(self, sql: str, catalog: str | None = None) -> list[list]:
        """Runs one statement and returns all its rows; a failure raises TrinoError with Trino's message."""
        import trino

        if self.proc.poll() is not None:
            raise TrinoError(f"the Trino server has ended (exit {self.proc.returncode}):\n{self._log_tail()}")
        conn = self.connect(catalog)
        try:
            cur = conn.cursor()
            cur.execute(sql)
            return cur.fetchall()
        except trino.exceptions.TrinoQueryError as e:
            raise TrinoError(f"{e.error_name}: {e.message}\n  in: {sql[:500]}") from None
        finally:
            conn.close()

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "_stdout", None):
            self._stdout.close()
