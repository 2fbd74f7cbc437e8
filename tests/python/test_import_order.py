"""lakesync imported first, then the modules every program imports next (hashlib, ssl, pyiceberg, ...):
the process must not crash. pyarrow's libparquet exports the OpenSSL functions it bundles, and a
module that loaded it before the system's libcrypto crashed the first later user of libcrypto
(`import lakesync; import hashlib` was a segmentation fault). Each case runs in a fresh interpreter,
because the order of the first imports is what matters."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from lakesync_testing import PACKAGE

CASES = {
    # the digest this (unaffected) process computes
    "hashlib": f"import hashlib; assert hashlib.sha256(b'lakesync').hexdigest() == '{hashlib.sha256(b'lakesync').hexdigest()}'",
    "ssl": "import ssl; ssl.create_default_context()",
    "pyiceberg": "import pyiceberg.catalog.sql",
    "pyarrow.parquet": "import pyarrow as pa, pyarrow.parquet as pq, io; pq.write_table(pa.table({'a': [1]}), io.BytesIO())",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lakesync_first_then(name):
    code = f"import lakesync\n{CASES[name]}\nprint('ok')"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PACKAGE), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "ok", (
        f"`import lakesync` then {name}: exit {p.returncode}\n{p.stderr[-3000:]}")
