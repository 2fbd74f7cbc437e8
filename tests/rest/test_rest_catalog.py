"""`lakesync catalog serve` against independent REST clients (pyiceberg's RestCatalog, DuckDB's iceberg
extension, schemathesis over the OpenAPI spec), lakesync's own REST client (the CLI and `lakesync run`
with a `type: rest` sink), races, auth and commit answers lost after the commit."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pytest
import requests
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
SHARED = Path(os.environ["LAKESYNC_SHARED_DIR"])
COLUMNS = ["order_id", "customer", "region", "amount"]
LAKESYNC = Path(os.environ.get("LAKESYNC_BUILD_DIR", REPO / "build")) / "lakesync"


def rest_catalog(url, **props):
    from pyiceberg.catalog.rest import RestCatalog
    return RestCatalog("rest", uri=url, **props)


def rows(table, columns=COLUMNS):
    return sorted(tuple(r[c] for c in columns) for r in table.select(columns).to_pylist())


def scan_jsonl(server, config, table, columns=COLUMNS):
    out = server.lakesync("scan", "--table", table, "--catalog-config", config, "--format", "jsonl").stdout
    return sorted(tuple(json.loads(line)[c] for c in columns) for line in out.splitlines() if line.strip())


def duckdb_rows(url, table, columns=COLUMNS):
    con = O.duckdb_connection(httpfs=True)
    O.duckdb_attach_rest(con, url)
    return sorted(tuple(r) for r in con.execute(f"SELECT {', '.join(columns)} FROM ice.{table}").fetchall())


ORDERS = pa.schema([pa.field("order_id", pa.int64(), nullable=False), pa.field("customer", pa.string()),
                    pa.field("region", pa.string()), pa.field("amount", pa.float64())])


def orders(start, n):
    return pa.table({"order_id": list(range(start, start + n)), "customer": [f"c{i % 7}" for i in range(n)],
                     "region": [["eu", "us", "apac"][i % 3] for i in range(n)],
                     "amount": [float(i) * 1.5 for i in range(n)]}, schema=ORDERS)


# ---- independent clients ------------------------------------------------------------------

def test_pyiceberg_duckdb_and_lakesync_share_tables_through_the_server(serve, tmp_path):
    server = serve()
    cat = rest_catalog(server.url)
    cat.create_namespace("shop", {"owner": "ana"})
    assert ("shop",) in cat.list_namespaces()
    assert cat.load_namespace_properties("shop")["owner"] == "ana"
    table = cat.create_table("shop.orders", schema=ORDERS)
    table.append(orders(0, 50))
    table.append(orders(50, 25))
    expected = rows(pa.concat_tables([orders(0, 50), orders(50, 25)]))
    config = server.config_file()

    # lakesync's client reads what pyiceberg wrote, and appends to it.
    assert scan_jsonl(server, config, "shop.orders") == expected
    extra = tmp_path / "more.jsonl"
    extra.write_text("".join(json.dumps({"order_id": 1000 + i, "customer": "z", "region": "eu",
                                         "amount": 2.0}) + "\n" for i in range(10)))
    server.lakesync("table", "append", "shop.orders", extra, "--catalog-config", config)
    expected += [(1000 + i, "z", "eu", 2.0) for i in range(10)]
    expected.sort()
    assert rows(cat.load_table("shop.orders").scan().to_arrow()) == expected
    assert duckdb_rows(server.url, "shop.orders") == expected
    assert len(cat.load_table("shop.orders").history()) == 3

    # DuckDB creates and fills a table; pyiceberg and lakesync read it.
    con = O.duckdb_connection(httpfs=True)
    O.duckdb_attach_rest(con, server.url)
    con.execute("CREATE TABLE ice.shop.made_by_duckdb (id BIGINT, name VARCHAR)")
    con.execute("INSERT INTO ice.shop.made_by_duckdb VALUES (1, 'a'), (2, 'b'), (3, NULL)")
    made = [(1, "a"), (2, "b"), (3, None)]
    assert sorted(rows(cat.load_table("shop.made_by_duckdb").scan().to_arrow(), ["id", "name"]),
                  key=str) == sorted(made, key=str)
    assert sorted(scan_jsonl(server, config, "shop.made_by_duckdb", ["id", "name"]), key=str) == sorted(made, key=str)

    # Listing, rename and drop through lakesync's client, seen by pyiceberg.
    listed = server.lakesync("table", "list", "shop", "--catalog-config", config, check=False)
    if listed.returncode == 0:
        assert "orders" in listed.stdout
    cat.rename_table("shop.made_by_duckdb", "shop.renamed")
    assert ("shop", "renamed") in cat.list_tables("shop")
    server.lakesync("table", "drop", "shop.renamed", "--catalog-config", config)
    assert ("shop", "renamed") not in cat.list_tables("shop")


def write_job(server, root: Path, sink_url: str) -> Path:
    job = yaml.safe_load((EXAMPLES / "delta-cdf-to-iceberg-v3-dv.yaml").read_text())
    job["source"]["table"] = str(root / "orders_delta")
    job["sink"]["catalog_name"] = "remote"
    job["sink"]["catalog_properties"] = {"type": "rest", "uri": sink_url}
    path = root / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    return path


def delta(root: Path, *args):
    subprocess.run([sys.executable, EXAMPLES / "demo_delta.py", *args, root / "orders_delta"], check=True)


def delta_rows(root: Path):
    from deltalake import DeltaTable
    return rows(DeltaTable(str(root / "orders_delta")).to_pyarrow_table())


def test_lakesync_run_keeps_a_table_in_sync_through_the_server(serve, tmp_path):
    server = serve()
    delta(tmp_path, "create")
    job = write_job(server, tmp_path, server.url)
    server.lakesync("run", job)
    delta(tmp_path, "change")
    delta(tmp_path, "change")
    server.lakesync("run", job)
    expected = delta_rows(tmp_path)
    cat = rest_catalog(server.url)
    assert rows(cat.load_table("shop.orders_v3").scan().to_arrow()) == expected
    assert duckdb_rows(server.url, "shop.orders_v3") == expected
    status = json.loads(server.lakesync("status", job).stdout)
    assert status["up_to_date"] is True
    # The server logged one JSON line per request, with its status.
    lines = [l for l in server.log_lines() if l.get("message") == "rest-catalog request"]
    assert lines and all({"method", "path", "status", "duration_ms"} <= set(l) for l in lines)
    assert not [l for l in lines if l["status"] >= 500]


# ---- races ----------------------------------------------------------------------------------

def test_two_writers_one_base_exactly_one_wins(serve):
    server = serve()
    cat = rest_catalog(server.url)
    cat.create_namespace("race")
    cat.create_table("race.t", schema=ORDERS)
    url = f"{server.url}/v1/namespaces/race/tables/t"
    for round_ in range(3):
        meta = requests.get(url).json()["metadata"]
        last = meta["last-column-id"]
        schema = next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])
        barrier = threading.Barrier(6)
        codes = []

        def commit(i):
            new_schema = dict(schema, fields=schema["fields"] + [
                {"id": last + 1, "name": f"extra_{round_}_{i}", "required": False, "type": "string"}])
            new_schema.pop("schema-id", None)
            body = {"requirements": [{"type": "assert-last-assigned-field-id", "last-assigned-field-id": last}],
                    "updates": [{"action": "add-schema", "schema": new_schema, "last-column-id": last + 1},
                                {"action": "set-current-schema", "schema-id": -1}]}
            barrier.wait()
            codes.append(requests.post(url, json=body).status_code)

        threads = [threading.Thread(target=commit, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(codes) == [200] + [409] * 5, codes
    assert len(cat.load_table("race.t").schema().fields) == len(ORDERS) + 3


def test_two_lakesync_writers_through_the_server_lose_nothing(serve, tmp_path):
    server = serve()
    cat = rest_catalog(server.url)
    cat.create_namespace("race")
    cat.create_table("race.appends", schema=ORDERS)
    config = server.config_file()
    files = []
    for w in range(2):
        for i in range(6):
            f = tmp_path / f"w{w}_{i}.jsonl"
            f.write_text(json.dumps({"order_id": w * 100 + i, "customer": f"w{w}", "region": "eu",
                                     "amount": float(i)}) + "\n")
            files.append(f)
    procs = []
    for w in range(2):
        cmd = " && ".join(f"{LAKESYNC} table append race.appends {tmp_path}/w{w}_{i}.jsonl --catalog-config {config}"
                          for i in range(6))
        procs.append(subprocess.Popen(["bash", "-c", cmd], env=server.env, cwd=tmp_path))
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    table = cat.load_table("race.appends")
    got = sorted(r["order_id"] for r in table.scan().to_arrow().to_pylist())
    assert got == sorted(w * 100 + i for w in range(2) for i in range(6))
    assert len(table.history()) == 12
    conflicts = [l for l in server.log_lines() if l.get("message") == "rest-catalog request" and l["status"] == 409]
    print(f"409 answers during the race: {len(conflicts)}")


# ---- auth and path tricks -------------------------------------------------------------------

AUTH = {
    "tokens": [{"token": "admin", "access": "read-write"},
               {"token": "reader", "access": "read-only"},
               {"token": "shop-only", "access": "read-write", "namespaces": ["shop"]}],
    "clients": [{"client_id": "etl", "client_secret": "etl-secret", "access": "read-write"}],
}


def test_auth_refusals(serve):
    server = serve(auth=AUTH)
    base = server.url + "/v1"

    def h(token):
        return {"Authorization": f"Bearer {token}"}

    assert requests.get(base + "/config").status_code == 401
    assert requests.get(base + "/config", headers=h("wrong")).status_code == 401
    assert requests.get(base + "/config", headers=h("None")).status_code == 401
    assert requests.post(base + "/namespaces", json={"namespace": ["shop"]}, headers=h("admin")).status_code == 200
    assert requests.post(base + "/namespaces", json={"namespace": ["hr"]}, headers=h("admin")).status_code == 200
    assert requests.get(base + "/namespaces", headers=h("reader")).status_code == 200
    r = requests.post(base + "/namespaces", json={"namespace": ["x"]}, headers=h("reader"))
    assert r.status_code == 403 and r.json()["error"]["type"] == "ForbiddenException"
    assert requests.get(base + "/namespaces/hr", headers=h("shop-only")).status_code == 403
    assert requests.get(base + "/namespaces/shop", headers=h("shop-only")).status_code == 200
    assert requests.delete(base + "/namespaces/hr", headers=h("shop-only")).status_code == 403
    # pyiceberg's OAuth2 client-credentials flow against the token endpoint.
    cat = rest_catalog(server.url, credential="etl:etl-secret")
    cat.create_namespace("etl")
    assert ("etl",) in cat.list_namespaces()
    with pytest.raises(Exception):
        rest_catalog(server.url, credential="etl:wrong")
    # lakesync's client with a token, and without one.
    ok = server.config_file("ok.yaml", token="reader")
    assert "shop" in server.lakesync("namespace", "list", "--catalog-config", ok).stdout
    denied = server.lakesync("namespace", "create", "x", "--catalog-config", ok, check=False)
    assert denied.returncode != 0 and "read-only" in denied.stderr
    anonymous = server.lakesync("namespace", "list", "--catalog-config", server.config_file("anon.yaml"), check=False)
    assert anonymous.returncode != 0 and "401" in anonymous.stderr


def test_path_tricks_in_names_are_refused(serve, tmp_path):
    server = serve()
    base = server.url + "/v1"
    assert requests.post(base + "/namespaces", json={"namespace": ["shop"]}).status_code == 200
    for path in ["/namespaces/..%2F..%2Fetc/tables", "/namespaces/shop/tables/%2E%2E",
                 "/namespaces/shop/tables/a%2Fb", "/namespaces/%2E%2E%1Fetc"]:
        assert requests.get(base + path).status_code == 400, path
    schema = {"type": "struct", "fields": [{"id": 1, "name": "x", "required": False, "type": "long"}]}
    for name in ["../evil", "a/b", "..", "a\\b"]:
        r = requests.post(base + "/namespaces/shop/tables", json={"name": name, "schema": schema})
        assert r.status_code == 400, (name, r.text)
    r = requests.post(base + "/namespaces", json={"namespace": ["..", "x"]})
    assert r.status_code == 400
    r = requests.post(base + "/namespaces/shop/tables",
                      json={"name": "t", "schema": schema, "location": f"file://{tmp_path}/outside"})
    assert r.status_code == 403
    r = requests.post(base + "/namespaces/shop/register",
                      json={"name": "t", "metadata-location": "file:///etc/passwd"})
    assert r.status_code == 403
    assert not (tmp_path / "outside").exists()
    assert requests.get(base + "/namespaces/shop/tables").json()["identifiers"] == []


# ---- commit answers lost after the commit ---------------------------------------------------

class LossyProxy:
    """Forwards to the server; answers commits (POST .../tables/{t}) 503 after forwarding them, so the
    commit happened but the client is told otherwise."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self.lost = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                r = requests.request(self.command, proxy.upstream + self.path, data=body, headers=headers)
                parts = self.path.split("?")[0].strip("/").split("/")
                commit = self.command == "POST" and len(parts) == 5 and parts[1] == "namespaces" and parts[3] == "tables"
                if commit and r.status_code == 200:
                    proxy.lost += 1
                    payload = json.dumps({"error": {"message": "lost", "type": "ServiceUnavailableException",
                                                    "code": 503}}).encode()
                    self.send_response(503)
                else:
                    payload = r.content
                    self.send_response(r.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = do_HEAD = _forward

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_commit_answered_503_after_committing_is_found_not_duplicated(serve, tmp_path):
    server = serve()
    proxy = LossyProxy(server.url)
    try:
        delta(tmp_path, "create")
        job = write_job(server, tmp_path, proxy.url)
        p = server.lakesync("run", job)
        delta(tmp_path, "change")
        p = server.lakesync("run", job)
        summaries = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
        assert summaries and summaries[-1]["status"] == "committed", p.stdout
        assert proxy.lost >= 2
        assert "landed" in p.stderr
    finally:
        proxy.close()
    cat = rest_catalog(server.url)
    table = cat.load_table("shop.orders_v3")
    assert rows(table.scan().to_arrow()) == delta_rows(tmp_path)
    # One snapshot per applied range: nothing was committed twice.
    assert len(table.history()) == proxy.lost


# ---- the OpenAPI spec -----------------------------------------------------------------------

def test_schemathesis_finds_no_server_errors_and_conforming_responses(serve, tmp_path):
    st = O.venv_tool("st")
    server = serve(extra=("--prefix", "wh"))
    base = server.url + "/v1"
    requests.post(base + "/namespaces", json={"namespace": ["shop"]})
    rest_catalog(server.url).create_table("shop.t", schema=ORDERS)
    (tmp_path / "schemathesis.toml").write_text('[parameters]\nprefix = "wh"\nnamespace = "shop"\ntable = "t"\n')
    ops = ["getConfig", "listNamespaces", "createNamespace", "loadNamespaceMetadata", "namespaceExists",
           "updateProperties", "listTables", "createTable", "loadTable", "tableExists", "updateTable",
           "renameTable", "reportMetrics", "registerTable", "commitTransaction", "dropTable", "dropNamespace"]
    cmd = [st, "--config-file", str(tmp_path / "schemathesis.toml"), "run",
           str(SHARED / "specs" / "rest-catalog-open-api.yaml"), "--url", server.url,
           "--checks", "not_a_server_error,response_schema_conformance", "--max-examples", "8",
           "--phases", "examples,fuzzing", "--workers", "1", "--no-color"]
    for op in ops:
        cmd += ["--include-operation-id", op]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-2000:]
    assert not [l for l in server.log_lines() if l.get("message") == "rest-catalog request" and l["status"] >= 500]


def test_template_destinations_commit_in_one_transaction_through_the_server(serve, tmp_path):
    server = serve()
    delta(tmp_path, "create")
    job = write_job(server, tmp_path, server.url)
    spec = yaml.safe_load(job.read_text())
    spec["sink"]["table"] = "shop.by_{region}"
    spec["sink"].pop("partition_fields", None)
    job.write_text(yaml.safe_dump(spec))
    server.lakesync("run", job)
    expected = delta_rows(tmp_path)
    cat = rest_catalog(server.url)
    tables = sorted(t[1] for t in cat.list_tables("shop"))
    assert tables == sorted(f"by_{r}" for r in {row[2] for row in expected})
    got, positions = [], set()
    for name in tables:
        t = cat.load_table(f"shop.{name}")
        got += rows(t.scan().to_arrow())
        summary = t.current_snapshot().summary.additional_properties
        positions.add(next(v for k, v in summary.items() if k.startswith("lakesync.source-position.")))
    assert sorted(got) == expected
    assert len(positions) == 1  # every table carries the same position, committed together
    commits = [l for l in server.log_lines() if l.get("message") == "rest-catalog request"
               and l["path"] == "/v1/transactions/commit"]
    assert commits and all(l["status"] == 204 for l in commits)
