"""Every refusal of `lakesync share serve`: missing, unknown and expired tokens; shares outside a
recipient's grant; tampered and expired signed URLs; paths outside a shared table. Every answer is
the protocol's error JSON {"errorCode", "message"}. Plus the mechanics recipients rely on: range
requests on file URLs, page tokens and refresh tokens."""
from __future__ import annotations

import hashlib
import json
import urllib.parse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import requests

from sharing_env import TOKEN, shares_config, wait_for

deltalake = pytest.importorskip("deltalake")


def make_table(path, rows=3, parts=1):
    from deltalake import write_deltalake

    for i in range(parts):
        t = pa.table({"id": list(range(i * rows, (i + 1) * rows)), "name": [f"n{j}" for j in range(rows)]})
        write_deltalake(str(path), t, mode="append" if i else "error",
                        configuration={"delta.enableChangeDataFeed": "true"} if i == 0 else None)
    return path


def error_of(res, status, code):
    assert res.status_code == status, (res.status_code, res.text)
    body = res.json()
    assert set(body) == {"errorCode", "message"}, body
    assert body["errorCode"] == code, body
    assert body["message"], body
    return body["message"]


def auth(token=TOKEN):
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def two_shares(tmp_path, serve):
    a = make_table(tmp_path / "a")
    b = make_table(tmp_path / "b")
    config = {
        "version": 1,
        "shares": [
            {"name": "sales", "schemas": [{"name": "s", "tables": [{"name": "a", "location": str(a), "historyShared": True}]}]},
            {"name": "hr", "schemas": [{"name": "s", "tables": [{"name": "b", "location": str(b)}]}]},
        ],
        "authorization": {"bearerToken": TOKEN},
        "recipients": [
            {"name": "alice", "token_sha256": hashlib.sha256(b"alice-secret").hexdigest(), "shares": ["sales"]},
            {"name": "old", "token": "old-secret", "shares": ["sales"], "expires": "2001-01-01T00:00:00Z"},
        ],
        "preSignedUrlTimeoutSeconds": 2,
    }
    return serve(config)


def query(server, table="sales/schemas/s/tables/a", body=None, token=TOKEN, headers=None):
    return requests.post(f"{server.endpoint}/shares/{table}/query", json=body or {},
                         headers={**auth(token), **(headers or {})}, timeout=60)


def file_urls(res):
    return [json.loads(line)["file"]["url"] for line in res.text.splitlines() if "file" in json.loads(line)]


def test_missing_and_unknown_tokens_are_401(two_shares):
    s = two_shares
    error_of(requests.get(f"{s.endpoint}/shares", timeout=60), 401, "UNAUTHENTICATED")
    error_of(requests.get(f"{s.endpoint}/shares", headers=auth("nope"), timeout=60), 401, "UNAUTHENTICATED")
    error_of(requests.get(f"{s.endpoint}/shares", headers={"Authorization": "Basic x"}, timeout=60), 401,
             "UNAUTHENTICATED")
    error_of(query(s, token="nope"), 401, "UNAUTHENTICATED")


def test_an_expired_recipient_token_is_401(two_shares):
    msg = error_of(requests.get(f"{two_shares.endpoint}/shares", headers=auth("old-secret"), timeout=60), 401,
                   "UNAUTHENTICATED")
    assert "expired" in msg


def test_a_recipient_sees_only_its_shares(two_shares):
    s = two_shares
    res = requests.get(f"{s.endpoint}/shares", headers=auth("alice-secret"), timeout=60)
    assert res.status_code == 200 and [i["name"] for i in res.json()["items"]] == ["sales"]
    assert query(s, token="alice-secret").status_code == 200
    # Not granted and not existing read alike: a recipient learns nothing about other shares.
    for table in ("hr/schemas/s/tables/b", "nosuch/schemas/s/tables/b"):
        error_of(query(s, table=table, token="alice-secret"), 403, "PERMISSION_DENIED")
    error_of(requests.get(f"{s.endpoint}/shares/hr/schemas", headers=auth("alice-secret"), timeout=60), 403,
             "PERMISSION_DENIED")
    # The one-for-everything token sees both, and gets 404 for what does not exist.
    res = requests.get(f"{s.endpoint}/shares", headers=auth(), timeout=60)
    assert [i["name"] for i in res.json()["items"]] == ["sales", "hr"]
    error_of(query(s, table="nosuch/schemas/s/tables/b"), 404, "RESOURCE_DOES_NOT_EXIST")
    error_of(query(s, table="sales/schemas/s/tables/zz"), 404, "RESOURCE_DOES_NOT_EXIST")


def test_tampered_file_urls_are_refused(two_shares):
    url = file_urls(query(two_shares))[0]
    assert requests.get(url, timeout=60).status_code == 200
    parts = urllib.parse.urlsplit(url)
    q = dict(urllib.parse.parse_qsl(parts.query))
    sig = q["X-Databricks-Signature"]
    bad_sig = sig[:-1] + ("0" if sig[-1] != "0" else "1")
    variants = [
        url.replace(sig, bad_sig),                                                     # another signature
        url.replace(f"expires={q['expires']}", f"expires={int(q['expires']) + 10**9}"),  # a later expiry
        url.replace("/tables/", "/tables/").replace(".parquet", "x.parquet"),          # another file
        url.replace("/sales/s/a/", "/hr/s/b/"),                                       # another table
        url.split("?")[0],                                                             # no signature
    ]
    for v in variants:
        error_of(requests.get(v, timeout=60), 403, "PERMISSION_DENIED")


def raw_get(url_base: str, raw_path_and_query: str):
    """GET with the path sent byte for byte (requests would resolve '..' segments itself)."""
    import http.client

    parts = urllib.parse.urlsplit(url_base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    conn.request("GET", raw_path_and_query)
    res = conn.getresponse()
    body = res.read().decode("utf-8", "replace")
    conn.close()
    return res.status, body


def test_paths_outside_a_shared_table_are_refused(two_shares, tmp_path):
    url = file_urls(query(two_shares))[0]
    parts = urllib.parse.urlsplit(url)
    prefix = parts.path.rsplit("/", 1)[0]
    marker = "TOP-SECRET-CONTENT-42"
    (tmp_path / "secret.txt").write_text(marker)
    for path in ("../../b/_delta_log/00000000000000000000.json", "%2e%2e/%2e%2e/secret.txt",
                 "..%2f..%2fsecret.txt", "_delta_log/../../secret.txt", "../../../../secret.txt"):
        status, body = raw_get(url, f"{prefix}/{path}?{parts.query}")
        assert status in (400, 403, 404), (path, status, body)
        assert marker not in body and "minReaderVersion" not in body, (path, body)
    # Request paths that climb out of the endpoint never reach a file either.
    status, body = raw_get(url, "/delta-sharing/files/sales/s/a/../../../../../etc/passwd")
    assert status in (400, 403, 404) and "root:" not in body


def test_a_table_whose_log_names_files_outside_it_is_refused(tmp_path, serve):
    table = make_table(tmp_path / "t")
    outside = tmp_path / "outside.parquet"
    pq.write_table(pa.table({"id": [99], "name": ["x"]}), outside)
    add = {"add": {"path": f"file://{outside}", "partitionValues": {}, "size": outside.stat().st_size,
                   "modificationTime": 0, "dataChange": True}}
    (table / "_delta_log" / "00000000000000000001.json").write_text(json.dumps(add) + "\n")
    server = serve(shares_config({"t": table}))
    msg = error_of(query(server, table="share1/schemas/default/tables/t"), 400, "UNSUPPORTED_OPERATION")
    assert "outside" in msg


def test_signed_urls_expire(two_shares):
    url = file_urls(query(two_shares))[0]
    # The URL lives preSignedUrlTimeoutSeconds (2 s here); wait until the server refuses it.
    wait_for(lambda: requests.get(url, timeout=60).status_code == 403, timeout=120, what="the URL to expire")
    msg = error_of(requests.get(url, timeout=60), 403, "PERMISSION_DENIED")
    assert "expired" in msg
    # A new query gives working URLs for the same files.
    assert requests.get(file_urls(query(two_shares))[0], timeout=60).status_code == 200


def test_file_urls_serve_ranges_and_head(two_shares, tmp_path):
    url = file_urls(query(two_shares))[0]
    whole = requests.get(url, timeout=60)
    assert whole.status_code == 200 and whole.content[:4] == b"PAR1"
    head = requests.head(url, timeout=60)
    assert head.status_code == 200 and int(head.headers["Content-Length"]) == len(whole.content)
    part = requests.get(url, headers={"Range": "bytes=4-99"}, timeout=60)
    assert part.status_code == 206 and part.content == whole.content[4:100]
    tail = requests.get(url, headers={"Range": "bytes=-8"}, timeout=60)
    assert tail.status_code == 206 and tail.content == whole.content[-8:]


def test_protocol_errors_are_4xx_json(two_shares):
    s = two_shares
    res = requests.post(f"{s.endpoint}/shares/sales/schemas/s/tables/a/query", data="{not json", headers=auth(),
                        timeout=60)
    error_of(res, 400, "MALFORMED_REQUEST")
    error_of(query(s, body={"version": "one"}), 400, "MALFORMED_REQUEST")
    error_of(query(s, body={"version": 1, "timestamp": "2020-01-01T00:00:00Z"}), 400, "INVALID_PARAMETER_VALUE")
    error_of(query(s, body={"version": 99}), 400, "INVALID_PARAMETER_VALUE")
    error_of(query(s, body={"maxFiles": 0}), 400, "INVALID_PARAMETER_VALUE")
    error_of(query(s, body={"pageToken": "forged"}), 400, "INVALID_PARAMETER_VALUE")
    error_of(query(s, body={"version": 0, "includeRefreshToken": True}), 400, "INVALID_PARAMETER_VALUE")
    # hr.s.b is shared without history: no time travel, no change feed.
    error_of(query(s, table="hr/schemas/s/tables/b", body={"version": 0}), 400, "INVALID_PARAMETER_VALUE")
    res = requests.get(f"{s.endpoint}/shares/hr/schemas/s/tables/b/changes?startingVersion=0", headers=auth(),
                       timeout=60)
    error_of(res, 400, "INVALID_PARAMETER_VALUE")
    res = requests.get(f"{s.endpoint}/shares/sales/schemas/s/tables/a/changes?startingVersion=5", headers=auth(),
                       timeout=60)
    error_of(res, 400, "INVALID_PARAMETER_VALUE")
    res = requests.get(f"{s.endpoint}/shares?maxResults=x", headers=auth(), timeout=60)
    error_of(res, 400, "INVALID_PARAMETER_VALUE")
    res = requests.post(f"{s.endpoint}/shares/sales/schemas/s/tables/a/query", json={}, timeout=60,
                        headers={**auth(), "delta-sharing-capabilities": "responseformat=avro"})
    error_of(res, 400, "INVALID_PARAMETER_VALUE")
    res = requests.post(f"{s.endpoint}/shares/sales/schemas/s/tables/a/query", json={}, timeout=60,
                        headers={**auth(), "fileidhash": "crc"})
    error_of(res, 400, "INVALID_PARAMETER_VALUE")


def test_pages_and_refresh_tokens(tmp_path, serve):
    table = make_table(tmp_path / "t", rows=2, parts=5)
    server = serve(shares_config({"t": table}))
    path = "share1/schemas/default/tables/t"
    everything = query(server, table=path)
    ids = sorted(json.loads(l)["file"]["id"] for l in everything.text.splitlines() if "file" in json.loads(l))
    assert len(ids) == 5
    seen, token = [], None
    while True:
        body = {"maxFiles": 2, **({"pageToken": token} if token else {})}
        res = query(server, table=path, body=body)
        assert res.status_code == 200, res.text
        lines = [json.loads(l) for l in res.text.splitlines()]
        assert "protocol" in lines[0] and "metaData" in lines[1] and "endStreamAction" in lines[-1]
        seen += [l["file"]["id"] for l in lines if "file" in l]
        token = lines[-1]["endStreamAction"].get("nextPageToken")
        if not token:
            break
        # A token belongs to its query: another body cannot use it.
        error_of(query(server, table=path, body={"maxFiles": 2, "pageToken": token, "limitHint": 1}), 400,
                 "INVALID_PARAMETER_VALUE")
    assert sorted(seen) == ids
    res = query(server, table=path, body={"includeRefreshToken": True})
    lines = [json.loads(l) for l in res.text.splitlines()]
    refresh = lines[-1]["endStreamAction"]["refreshToken"]
    make_table_more(table)
    res = query(server, table=path, body={"refreshToken": refresh})
    again = sorted(json.loads(l)["file"]["id"] for l in res.text.splitlines() if "file" in json.loads(l))
    assert again == ids  # the same version as before, although the table moved on
    assert res.headers["Delta-Table-Version"] == "4"
    error_of(query(server, table=path, body={"refreshToken": refresh + "0"}), 400, "INVALID_PARAMETER_VALUE")


def make_table_more(path):
    from deltalake import write_deltalake

    write_deltalake(str(path), pa.table({"id": [1000], "name": ["late"]}), mode="append")
