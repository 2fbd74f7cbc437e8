"""A throwaway PostgreSQL server for the tests: Debian's binaries, a temporary data folder, loopback only.

    python tests/pgserver.py start DIR   # initdb + pg_ctl start; prints `export LAKESYNC_TEST_POSTGRES=...`
    python tests/pgserver.py stop DIR    # pg_ctl stop (immediate), whatever state the server is in

scripts/test.sh starts one for the whole run (ctest and pytest) and stops it on exit, even on failure;
tests/conftest.py starts one itself when the variable is not set and the binaries exist. PostgreSQL
refuses to run as root, so as root the server runs as the `postgres` system user (created by Debian's
package) and DIR is handed to it. The port is a free one found by binding port 0; authentication is
`trust` for the loopback address only, with a superuser named `lakesync`.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

SUPERUSER = "lakesync"


def binaries() -> Path | None:
    """The newest Debian PostgreSQL bin folder (/usr/lib/postgresql/<major>/bin), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[4]))
    return Path(found[-1]).parent if found else None


def _as_server_user(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    return ["runuser", "-u", "postgres", "--", *cmd]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(base: Path, attempts: int = 5) -> str:
    """Starts a server with its data in base/data; returns its URI (postgresql://lakesync@127.0.0.1:PORT)."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed (Debian package postgresql)")
    base = Path(base).resolve()
    data, sockets = base / "data", base / "sockets"
    base.mkdir(parents=True, exist_ok=True)
    sockets.mkdir(exist_ok=True)
    if os.geteuid() == 0:
        pw = pwd.getpwnam("postgres")
        for p in (base, sockets):
            os.chown(p, pw.pw_uid, pw.pw_gid)
        # Folders above a mktemp folder are world-traversable; the server user must reach base.
    if not (data / "PG_VERSION").exists():
        subprocess.run(_as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER, "-A", "trust",
                                        "-E", "UTF8", "--no-sync"]), check=True, capture_output=True, text=True)
    last = ""
    for _ in range(attempts):
        port = _free_port()
        options = (f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off "
                   f"-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        done = subprocess.run(_as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-w",
                                               "-t", "60", "-l", str(base / "server.log"), "start"]),
                              capture_output=True, text=True)
        if done.returncode == 0:
            (base / "port").write_text(str(port))
            return f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres"
        last = done.stderr + (base / "server.log").read_text(errors="replace")[-2000:]
    raise RuntimeError(f"could not start PostgreSQL: {last}")


def stop(base: Path) -> None:
    bin_dir = binaries()
    data = Path(base).resolve() / "data"
    if bin_dir is None or not (data / "postmaster.pid").exists():
        return
    subprocess.run(_as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
                   capture_output=True, text=True)


def wait_ready(uri: str, deadline_s: float = 60) -> None:
    import psycopg2

    end = time.monotonic() + deadline_s
    while True:
        try:
            psycopg2.connect(uri).close()
            return
        except psycopg2.OperationalError:
            if time.monotonic() > end:
                raise
            time.sleep(0.1)


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] not in ("start", "stop"):
        print(__doc__, file=sys.stderr)
        return 2
    base = Path(sys.argv[2])
    if sys.argv[1] == "start":
        print(f"export LAKESYNC_TEST_POSTGRES={start(base)}")
    else:
        stop(base)
        shutil.rmtree(base / "data", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
