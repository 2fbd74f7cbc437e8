"""Shared pytest set-up: where the build and the shared corpora are.

Test modules read LAKESYNC_BUILD_DIR (the CMake build with the lakesync binary and the probe programs)
and LAKESYNC_SHARED_DIR (../shared: specs and corpora). This file runs before they are imported and
fills both in when the caller did not.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _find_shared() -> Path:
    for candidate in (REPO.parent / "shared", Path("/work/shared")):
        if (candidate / "corpora").is_dir():
            return candidate
    return REPO.parent / "shared"


os.environ.setdefault("LAKESYNC_BUILD_DIR", str(REPO / "build"))
os.environ.setdefault("LAKESYNC_SHARED_DIR", str(_find_shared()))
# `lakesync run` keeps its run history (for `lakesync status`) under LAKESYNC_STATE_DIR; tests never
# write into the user's ~/.local/state. A folder made here is removed when the session ends.
if "LAKESYNC_STATE_DIR" not in os.environ:
    import atexit
    import shutil

    os.environ["LAKESYNC_STATE_DIR"] = tempfile.mkdtemp(prefix="lakesync-test-state-")
    atexit.register(shutil.rmtree, os.environ["LAKESYNC_STATE_DIR"], ignore_errors=True)


# --- PostgreSQL (the SQL catalog's shared-deployment database) -------------------------------------
import shutil  # noqa: E402
import tempfile  # noqa: E402
import uuid  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def postgres_server():
    """The URI of a PostgreSQL server's `postgres` database: LAKESYNC_TEST_POSTGRES (scripts/test.sh
    starts one for the whole run), or a throwaway server started here (tests/pgserver.py) and stopped
    at the end of the session. Skips when PostgreSQL is not installed."""
    import sys

    sys.path.insert(0, str(REPO / "tests"))
    import pgserver

    given = os.environ.get("LAKESYNC_TEST_POSTGRES")
    if given:
        pgserver.wait_ready(given)
        yield given
        return
    if pgserver.binaries() is None:
        pytest.skip("PostgreSQL is not installed (scripts/setup.sh --test installs Debian's postgresql)")
    # Not under pytest's tmp_path: as root the server runs as the `postgres` user, who cannot enter
    # pytest's private /tmp/pytest-of-root; a mkdtemp folder's parent (/tmp) is open to everyone.
    base = Path(tempfile.mkdtemp(prefix="lakesync-pg-"))
    try:
        uri = pgserver.start(base)
        pgserver.wait_ready(uri)
        yield uri
    finally:
        pgserver.stop(base)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def postgres_db(postgres_server):
    """A fresh, empty database on the test server; yields its libpq URI (postgresql://user@host:port/db)."""
    import psycopg2

    name = "t_" + uuid.uuid4().hex[:16]
    con = psycopg2.connect(postgres_server)
    con.autocommit = True
    con.cursor().execute(f"CREATE DATABASE {name}")
    con.close()
    yield postgres_server.rsplit("/", 1)[0] + "/" + name
    con = psycopg2.connect(postgres_server)
    con.autocommit = True
    con.cursor().execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    con.close()


# --- The skip guard (tests/skip_guard.py, tests/expected_skips.py) ---------------------------------
def pytest_configure(config):
    import sys

    sys.path.insert(0, str(REPO / "tests"))
    import skip_guard

    skip_guard.register(config)
