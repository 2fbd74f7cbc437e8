"""The README's "Using it" block runs as written (in a scratch folder instead of ./demo): it makes every
input file it uses, and each command succeeds. Its Iceberg results are checked with pyiceberg."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync
REPO = Path(__file__).resolve().parents[2]


def test_using_it_runs_as_written(tmp_path):
    pytest.importorskip("deltalake")
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Using it"):]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    assert "mkdir -p demo && cd demo" in block
    script = block.replace("mkdir -p demo && cd demo", f"mkdir -p {tmp_path}/demo && cd {tmp_path}/demo")
    script = script.replace('repo="$PWD"', f'repo="{REPO}"')
    env = {k: v for k, v in O.Cli(tmp_path).env.items() if k != "LAKESYNC_WAREHOUSE"}
    # The built binary under test, wherever the build directory is.
    env["PATH"] = f"{O.BUILD_DIR}:{env['PATH']}"
    script = script.replace('export PATH="$repo/build:$PATH"', "true")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    from pyiceberg.catalog.sql import SqlCatalog
    warehouse = tmp_path / "demo" / "lakesync-warehouse"
    catalog = SqlCatalog("lakesync", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=f"file://{warehouse}")
    orders = catalog.load_table("shop.orders").scan().to_arrow().to_pylist()
    assert sorted(r["customer"] for r in orders) == ["ana", "chen", "dara"]
    from deltalake import DeltaTable
    columns = ["order_id", "customer", "region", "amount"]
    delta = DeltaTable(str(tmp_path / "demo" / "example-data" / "orders_delta")).to_pyarrow_table().to_pylist()
    synced = catalog.load_table("shop.orders_v2").scan().to_arrow().to_pylist()
    assert sorted(tuple(r[c] for c in columns) for r in synced) == sorted(tuple(r[c] for c in columns) for r in delta)
