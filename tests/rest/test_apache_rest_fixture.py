"""lakesync's REST client against an independent server: Apache Iceberg's REST catalog fixture
(org.apache.iceberg.rest.RESTCatalogServer from iceberg-open-api 1.10.1's test-fixtures jar, over an
in-memory JdbcCatalog), installed by scripts/setup-rest-fixture.sh. Skips when it is not installed.
Java starts in 5-10 s, so this is one test that does everything."""
from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
LIB = REPO / ".tools" / "iceberg-rest-fixture" / "lib"
LAKESYNC = Path(os.environ.get("LAKESYNC_BUILD_DIR", REPO / "build")) / "lakesync"


@pytest.fixture
def fixture_server(tmp_path):
    if not LIB.is_dir():
        pytest.skip(f"Apache's REST fixture is not installed in {LIB}: run scripts/setup-rest-fixture.sh")
    warehouse = tmp_path / "fixture-wh"
    warehouse.mkdir()
    env = dict(os.environ, CATALOG_WAREHOUSE=f"file://{warehouse}", CATALOG_REST_PORT="0")
    log_path = tmp_path / "fixture.log"
    log = open(log_path, "wb")
    proc = subprocess.Popen(["java", "-cp", f"{LIB}/*", "org.apache.iceberg.rest.RESTCatalogServer"], env=env,
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    port = None
    while time.monotonic() < deadline and port is None:
        if proc.poll() is not None:
            pytest.fail(f"the REST fixture exited {proc.returncode}: {log_path.read_text(errors='replace')[-3000:]}")
        m = re.search(r"Started ServerConnector@\S+\{HTTP/1.1, \(http/1.1\)\}\{[\d.]+:(\d+)\}", log_path.read_text(errors="replace"))
        if m:
            port = int(m.group(1))
        else:
            time.sleep(0.3)
    if port is None:
        proc.kill()
        pytest.fail(f"the REST fixture did not start within 120 s: {log_path.read_text(errors='replace')[-3000:]}")
    yield f"http://127.0.0.1:{port}", warehouse
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


def test_lakesync_client_against_apache_rest_fixture(fixture_server, tmp_path):
    url, warehouse = fixture_server
    config = tmp_path / "rest.yaml"
    config.write_text(yaml.safe_dump({"catalog_name": "fixture", "catalog_properties": {"type": "rest", "uri": url}}))

    def ls(*args, check=True):
        p = subprocess.run([str(LAKESYNC), *map(str, args), "--catalog-config", str(config)], capture_output=True,
                           text=True, timeout=300, cwd=tmp_path)
        if check:
            assert p.returncode == 0, f"lakesync {args}: {p.stderr}"
        return p

    ls("namespace", "create", "shop")
    assert "shop" in ls("namespace", "list").stdout
    (tmp_path / "schema.yaml").write_text("fields:\n  - {name: id, type: long, required: true}\n"
                                          "  - {name: name, type: string}\n")
    ls("table", "create", "shop.t", "--schema", tmp_path / "schema.yaml", "--format-version", "2",
       "--partition", "bucket(id, 4)")
    for i in range(3):
        f = tmp_path / f"rows{i}.jsonl"
        f.write_text("".join(json.dumps({"id": i * 10 + j, "name": f"n{i}"}) + "\n" for j in range(10)))
        ls("table", "append", "shop.t", f)
    ls("table", "delete", "shop.t", "--where", "id < 5")
    out = ls("scan", "--table", "shop.t", "--format", "jsonl").stdout
    got = sorted(json.loads(l)["id"] for l in out.splitlines() if l.strip())
    assert got == list(range(5, 30))
    # The fixture's own catalog agrees: pyiceberg through the same server reads what lakesync wrote.
    from pyiceberg.catalog.rest import RestCatalog
    cat = RestCatalog("fixture", uri=url)
    table = cat.load_table("shop.t")
    assert sorted(r["id"] for r in table.scan().to_arrow().to_pylist()) == list(range(5, 30))
    assert len(table.history()) == 4
    # Errors map: missing table, existing namespace.
    missing = ls("scan", "--table", "shop.nope", check=False)
    assert missing.returncode == 3, missing.stderr
    again = ls("namespace", "create", "shop", check=False)
    assert again.returncode != 0 and "already exists" in again.stderr.lower()
    ls("table", "drop", "shop.t")
    assert ("shop", "t") not in cat.list_tables("shop")
