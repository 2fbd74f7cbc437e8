"""The dashboard's JSON API (`lakesync ui`, docs/ui.md) against independent views of the same tables:
pyiceberg's (snapshots, summaries, data and delete files, partitions, schemas, rows read) and
`lakesync status` for the job. One scenario per module (conftest.py): a Delta table synced by a job in
three commits, two source versions not applied yet, and a v2 table with position deletes."""

from __future__ import annotations

import json
import subprocess

import pyarrow.compute as pc
import pytest

from ui_scenario import LAKESYNC, TARGET, V2_TABLE, UiServer


def _catalog(scenario):
    return scenario.env.catalog()


def test_overview_lists_every_table_with_pyiceberg_counts(scenario, ui):
    catalog = _catalog(scenario)
    overview = ui.get_json("/api/v1/overview")
    by_name = {t["name"]: t for t in overview["tables"]}
    expected = sorted(".".join(ident) for ns in catalog.list_namespaces() for ident in catalog.list_tables(ns))
    assert sorted(by_name) == expected == sorted([TARGET, V2_TABLE])
    assert overview["namespaces"] == ["shop"]
    for name, row in by_name.items():
        t = catalog.load_table(name)
        snap = t.current_snapshot()
        summary = snap.summary.additional_properties
        assert row["current_snapshot_id"] == str(snap.snapshot_id)
        assert row["last_commit_ms"] == snap.timestamp_ms
        assert row["last_operation"] == snap.summary.operation.value
        assert row["snapshots"] == len(t.snapshots())
        assert row["format_version"] == t.format_version
        assert row["size_bytes"] == int(summary["total-files-size"])
        assert row["data_files"] == int(summary["total-data-files"])
        # Rows once deletes apply, as pyiceberg reads them.
        assert row["rows"] == t.scan().to_arrow().num_rows
    assert overview["totals"]["rows"] == sum(r["rows"] for r in overview["tables"])
    assert overview["totals"]["tables"] == 2


def test_table_snapshots_match_pyiceberg(scenario, ui):
    for name in (TARGET, V2_TABLE):
        t = _catalog(scenario).load_table(name)
        health = ui.get_json(f"/api/v1/table?name={name}")
        ours = health["snapshots"]
        theirs = sorted(t.snapshots(), key=lambda s: s.sequence_number)
        assert [s["snapshot_id"] for s in ours] == [str(s.snapshot_id) for s in theirs]
        for a, b in zip(ours, theirs):
            props = b.summary.additional_properties
            assert a["sequence_number"] == b.sequence_number
            assert a["timestamp_ms"] == b.timestamp_ms
            assert a["operation"] == b.summary.operation.value
            assert a["parent_snapshot_id"] == (str(b.parent_snapshot_id) if b.parent_snapshot_id else None)
            assert a["total_records"] == int(props["total-records"])
            assert a["added_records"] == (int(props["added-records"]) if "added-records" in props else None)
            # Rows readers see at that snapshot, as pyiceberg reads them (time travel).
            assert a["live_records"] == t.scan(snapshot_id=b.snapshot_id).to_arrow().num_rows
        assert [s["current"] for s in ours] == [s.snapshot_id == t.current_snapshot().snapshot_id for s in theirs]


def test_table_files_deletes_and_partitions_match_pyiceberg(scenario, ui):
    for name in (TARGET, V2_TABLE):
        t = _catalog(scenario).load_table(name)
        health = ui.get_json(f"/api/v1/table?name={name}")
        files = t.inspect.files()  # live data and delete files of the current snapshot
        data = files.filter(pc.equal(files["content"], 0))
        assert health["files"]["data"]["files"] == data.num_rows
        assert health["files"]["data"]["records"] == pc.sum(data["record_count"]).as_py()
        assert health["files"]["data"]["bytes"] == pc.sum(data["file_size_in_bytes"]).as_py()
        assert sum(b["files"] for b in health["files"]["size_histogram"]) == data.num_rows
        for b in health["files"]["size_histogram"]:
            sizes = data["file_size_in_bytes"].to_pylist()
            assert b["files"] == sum(b["min_bytes"] <= s < b["max_bytes"] for s in sizes)
        deletes = files.filter(pc.equal(files["content"], 1))
        formats = deletes["file_format"].to_pylist()
        dv = [i for i, f in enumerate(formats) if f.upper() == "PUFFIN"]
        pos = [i for i, f in enumerate(formats) if f.upper() != "PUFFIN"]
        records = deletes["record_count"].to_pylist()
        kinds = health["delete_files"]
        assert kinds["deletion_vectors"]["files"] == len(dv)
        assert kinds["deletion_vectors"]["records"] == sum(records[i] for i in dv)
        assert kinds["position_delete_files"]["files"] == len(pos)
        assert kinds["position_delete_files"]["records"] == sum(records[i] for i in pos)
        assert kinds["equality_delete_files"]["files"] == files.filter(pc.equal(files["content"], 2)).num_rows
        # Data files with a deletion vector: those a live vector references.
        referenced = set(deletes["referenced_data_file"].to_pylist()) if "referenced_data_file" in deletes.column_names \
            else None
        if referenced is not None and dv:
            data_paths = set(data["file_path"].to_pylist())
            assert health["files"]["with_deletion_vector"] == len(data_paths & {deletes["referenced_data_file"][i].as_py()
                                                                                for i in dv})
        # Partitions: pyiceberg's partitions table counts the same files and records.
        parts = t.inspect.partitions()
        if t.spec().is_unpartitioned():
            assert [p["partition"] for p in health["partitions"]] == [""]
        else:
            assert health["partition_count"] == parts.num_rows
            assert sorted(p["records"] for p in health["partitions"]) == sorted(parts["record_count"].to_pylist())
            assert sorted(p["data_files"] for p in health["partitions"]) == sorted(parts["file_count"].to_pylist())
        # Schemas: the metadata's, by id.
        assert [s["schema_id"] for s in health["schemas"]] == sorted(s.schema_id for s in t.schemas().values())
        current = [s for s in health["schemas"] if s["current"]]
        assert [f["name"] for f in current[0]["fields"]] == [f.name for f in t.schema().fields]
    v2 = ui.get_json(f"/api/v1/table?name={V2_TABLE}")
    assert v2["delete_files"]["position_delete_files"]["records"] == 10  # id < 10
    assert v2["files"]["rows_deleted_by_position"] == 10
    target = ui.get_json(f"/api/v1/table?name={TARGET}")
    assert target["delete_files"]["deletion_vectors"]["files"] > 0
    # The compaction hint shows the numbers it is based on.
    hint = target["compaction"]
    assert hint["needed"] == bool(hint["reasons"])
    assert hint["thresholds"]["min_input_files"] == 5


def test_jobs_match_lakesync_status_and_the_snapshot_summaries(scenario, ui):
    status = scenario.status()
    sink_id = status["sink_id"]
    jobs = ui.get_json("/api/v1/jobs")
    [job] = [j for j in jobs["jobs"] if j["sink_id"] == sink_id]
    assert job["job_file"] == str(scenario.job)
    for key in ("lag", "source_latest", "committed_position", "up_to_date", "running"):
        assert job[key] == status[key], key
    assert status["lag"] == 2 and status["committed_position"] == 6
    assert job["runs"] == 3
    detail = ui.get_json(f"/api/v1/job?sink_id={sink_id}")
    t = _catalog(scenario).load_table(TARGET)
    snaps = sorted((s for s in t.snapshots()
                    if s.summary.additional_properties.get("lakesync.sink-id") == sink_id),
                   key=lambda s: s.sequence_number)
    assert [r["snapshot_id"] for r in detail["runs"]] == [str(s.snapshot_id) for s in snaps]
    assert [r["position"] for r in detail["runs"]] == [
        s.summary.additional_properties[f"lakesync.source-position.{sink_id}"] for s in snaps] == ["0", "2", "6"]
    assert [r["added_records"] for r in detail["runs"]] == [
        int(s.summary.additional_properties.get("added-records", 0)) for s in snaps]
    # The job's own summary lines say how many rows each commit wrote.
    written = [s["tables"][0]["rows_written"] for s in scenario.summaries if s["status"] == "committed"]
    assert [r["added_records"] for r in detail["runs"]] == written
    for r in detail["runs"]:
        assert r["duration_seconds"] is not None and r["duration_seconds"] >= 0
    assert detail["status"]["lag"] == status["lag"]
    # The lag over time: after each run 0 commits behind; before runs 2 and 3 the versions made since.
    history = detail["lag_history"]
    assert [p["point"] for p in history] == ["after", "before", "after", "before", "after", "now"]
    assert [p["commits"] for p in history] == [0, 2, 0, 4, 0, 2]
    assert history[-1]["seconds"] > 0


def test_without_job_files_jobs_come_from_the_catalog_alone(scenario):
    server = UiServer(scenario.env)
    try:
        jobs = server.get_json("/api/v1/jobs")
        assert jobs["jobs_dir"] is None
        [job] = jobs["jobs"]
        assert job["runs"] == 3 and job["position"] == "6" and "lag" not in job
        detail = server.get_json(f"/api/v1/job?sink_id={job['sink_id']}")
        assert detail["lag_history"] is None and "--jobs" in detail["lag_history_note"]
    finally:
        assert server.stop() == 0  # SIGTERM: a graceful stop


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_nothing_can_be_changed_through_the_dashboard(scenario, ui, method):
    before = {n: _catalog(scenario).load_table(n).metadata_location for n in (TARGET, V2_TABLE)}
    for path in ("/", "/api/v1/overview", f"/api/v1/table?name={TARGET}", "/api/v1/jobs", "/api/v1/tables/x"):
        status, headers, body = ui.request(path, method=method, body=b"{}")
        assert status == 405, (method, path, status, body)
        assert headers.get("Allow") == "GET, HEAD"
    after = {n: _catalog(scenario).load_table(n).metadata_location for n in (TARGET, V2_TABLE)}
    assert before == after


def test_errors_are_json_naming_what_was_asked(ui):
    status, _, body = ui.request("/api/v1/table?name=shop.nope")
    assert status == 404 and "shop.nope" in json.loads(body)["error"]["message"]
    status, _, body = ui.request("/api/v1/table")
    assert status == 400 and "name" in json.loads(body)["error"]["message"]
    status, _, body = ui.request("/api/v1/job?sink_id=nobody")
    assert status == 404 and "nobody" in json.loads(body)["error"]["message"]


def test_auth_tokens_and_loopback_default(scenario, tmp_path):
    auth = tmp_path / "auth.yaml"
    auth.write_text("tokens:\n  - {token: reader-secret}\n  - {token: other-secret, namespaces: [other]}\n")
    server = UiServer(scenario.env, "--auth", str(auth))
    try:
        assert server.request("/api/v1/overview")[0] == 401
        assert server.request("/api/v1/overview", token="wrong")[0] == 401
        assert len(server.get_json("/api/v1/overview", token="reader-secret")["tables"]) == 2
        assert server.get_json("/api/v1/overview", token="other-secret")["tables"] == []
        assert server.request("/")[0] == 200  # the page asks for the token itself
    finally:
        server.stop()
    # Listening beyond loopback without --auth is refused before anything is served.
    p = subprocess.run([str(LAKESYNC), "ui", "--listen", "0.0.0.0:0"], cwd=scenario.env.root, env=scenario.env.env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "--auth" in p.stderr, p.stderr
