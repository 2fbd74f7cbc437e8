"""The shape of `lakesync share serve`'s answers where no client library looks: startingVersion
queries, predicate and limit hints, historical metadata, headers, in both formats. Expected file sets
come from deltalake (its `get_add_actions` lists a version's files)."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest
import requests

from sharing_env import TOKEN, shares_config

deltalake = pytest.importorskip("deltalake")

AUTH = {"Authorization": f"Bearer {TOKEN}"}
DELTA = {"delta-sharing-capabilities": "responseformat=delta;readerfeatures=deletionvectors,columnmapping"}


@pytest.fixture
def table(tmp_path, serve):
    from deltalake import DeltaTable, write_deltalake

    path = tmp_path / "t"
    t = lambda ids, region: pa.table({"id": ids, "region": [region] * len(ids)})  # noqa: E731
    write_deltalake(str(path), t([1, 2], "eu"), partition_by=["region"],
                    configuration={"delta.enableChangeDataFeed": "true"})          # v0
    write_deltalake(str(path), t([3, 4], "us"), mode="append")                    # v1
    write_deltalake(str(path), t([5], "ap"), mode="append")                       # v2
    DeltaTable(str(path)).delete("id = 3")                                        # v3 (cdc file)
    DeltaTable(str(path)).alter.set_table_properties({"delta.appendOnly": "false"})  # v4: metaData
    write_deltalake(str(path), t([6], "eu"), mode="append")                       # v5
    server = serve(shares_config({"t": path}))
    return server, path


def lines(res):
    assert res.status_code == 200, res.text
    return [json.loads(line) for line in res.text.splitlines()]


def post(server, body, headers=None):
    return requests.post(f"{server.endpoint}/shares/share1/schemas/default/tables/t/query", json=body,
                         headers={**AUTH, **(headers or {})}, timeout=60)


def test_starting_version_queries_list_every_data_change_file(table):
    server, path = table
    res = post(server, {"startingVersion": 1, "endingVersion": 3})
    got = lines(res)
    assert res.headers["Delta-Table-Version"] == "1"
    assert "protocol" in got[0] and got[1]["metaData"]["version"] == 1
    kinds = sorted((next(iter(l)), next(iter(l.values()))["version"]) for l in got[2:])
    # v1 and v2 appends; v3's DELETE rewrote a file: remove + add, and its cdc file.
    assert kinds == [("add", 1), ("add", 2), ("add", 3), ("cdf", 3), ("remove", 3)]
    for l in got[2:]:
        body = next(iter(l.values()))
        assert {"url", "id", "partitionValues", "size", "timestamp", "version"} <= set(body)
    delta = lines(post(server, {"startingVersion": 1, "endingVersion": 3}, DELTA))
    actions = sorted(next(iter(l["file"]["deltaSingleAction"])) for l in delta[2:])
    assert actions == ["add", "add", "add", "cdc", "remove"]
    assert "deltaProtocol" in delta[0]["protocol"] and "deltaMetadata" in delta[1]["metaData"]


def test_predicate_and_limit_hints_prune_files(table):
    server, path = table
    hint = json.dumps({"op": "equal", "children": [{"op": "column", "name": "region", "valueType": "string"},
                                                   {"op": "literal", "value": "eu", "valueType": "string"}]})
    files = [l["file"] for l in lines(post(server, {"jsonPredicateHints": hint}))[2:]]
    want = [a for a in pa.table(deltalake.DeltaTable(str(path)).get_add_actions(flatten=True)).to_pylist()
            if a["partition.region"] == "eu"]
    assert sorted(f["size"] for f in files) == sorted(a["size_bytes"] for a in want)
    assert all(f["partitionValues"] == {"region": "eu"} for f in files)
    # Stats prune too: ids are 1..6, one file per id range.
    by_stats = json.dumps({"op": "greaterThan", "children": [{"op": "column", "name": "id", "valueType": "long"},
                                                             {"op": "literal", "value": "5", "valueType": "long"}]})
    files = [l["file"] for l in lines(post(server, {"jsonPredicateHints": by_stats}))[2:]]
    assert len(files) == 1 and json.loads(files[0]["stats"])["maxValues"]["id"] == 6
    # A hint the server cannot use returns every file (best effort).
    everything = lines(post(server, {}))[2:]
    assert len(lines(post(server, {"jsonPredicateHints": "{\"op\":\"nand\"}"}))[2:]) == len(everything)
    assert len(lines(post(server, {"limitHint": 1}))[2:]) == 1


def test_changes_with_historical_metadata_and_headers(table):
    server, path = table
    url = f"{server.endpoint}/shares/share1/schemas/default/tables/t/changes"
    res = requests.get(url, params={"startingVersion": 3, "includeHistoricalMetadata": "True"}, headers=AUTH,
                       timeout=60)
    got = lines(res)
    assert res.headers["Delta-Table-Version"] == "3"
    assert res.headers["delta-sharing-capabilities"] == "responseformat=parquet"
    metadata = [l["metaData"] for l in got[1:] if "metaData" in l]
    assert [m["version"] for m in metadata] == [3, 4]
    # Without it, no extra lines (the Python client's parquet path crashes on them).
    plain = lines(requests.get(url, params={"startingVersion": 3}, headers=AUTH, timeout=60))
    assert sum("metaData" in l for l in plain) == 1
    # An end beyond the latest version is clamped; an end before the start is refused.
    clamped = requests.get(url, params={"startingVersion": 4, "endingVersion": 99}, headers=AUTH, timeout=60)
    assert clamped.status_code == 200
    assert requests.get(url, params={"startingVersion": 4, "endingVersion": 2}, headers=AUTH,
                        timeout=60).status_code == 400
    # The legacy HEAD form of /version.
    head = requests.head(f"{server.endpoint}/shares/share1/schemas/default/tables/t", headers=AUTH, timeout=60)
    assert head.status_code == 200 and head.headers["Delta-Table-Version"] == "5"
    # includeendstreamaction is confirmed in the header and honoured with a last line.
    res = requests.get(url, params={"startingVersion": 5}, timeout=60,
                       headers={**AUTH, "delta-sharing-capabilities": "includeendstreamaction=true"})
    assert "includeendstreamaction=true" in res.headers["delta-sharing-capabilities"]
    last = lines(res)[-1]
    assert "endStreamAction" in last and last["endStreamAction"]["minUrlExpirationTimestamp"] > 0
