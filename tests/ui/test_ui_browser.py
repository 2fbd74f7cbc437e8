"""The dashboard's pages in a real headless Chromium (Debian's `chromium`, driven through the DevTools
protocol, cdp.py): after a job has made several commits, the table and job pages show the counts that
`lakesync status` and pyiceberg's snapshot list give, and the charts are drawn with their data points.
Screenshots are kept under tests/ui/artifacts/ (gitignored) as the run's evidence.

One Chromium for the whole module. Under CI (LAKESYNC_CI=1) a missing Chromium fails the tests; outside
CI it skips them, saying how to install it (scripts/setup.sh --test)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import cdp
from ui_scenario import TARGET, V2_TABLE

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


@pytest.fixture(scope="module")
def browser():
    binary = cdp.chromium_binary()
    if binary is None:
        message = "Chromium is not installed (scripts/setup.sh --test installs Debian's chromium)"
        if os.environ.get("LAKESYNC_CI") == "1":
            pytest.fail(message)
        pytest.skip(message)
    b = cdp.Browser(binary)
    yield b
    b.close()


def show(browser, ui, hash_route: str, page: str):
    """Opens a page and waits until it has rendered (app.js sets body[data-page])."""
    browser.open(f"{ui.url}/#/{hash_route}")
    browser.wait_for(f"document.body.dataset.page === '{page}' && location.hash === '#/{hash_route}'",
                     f"the {page} page {hash_route}")
    assert browser.evaluate("document.getElementById('page-error') === null"), \
        browser.evaluate("document.getElementById('page-error').innerText")


def cells(browser, table_id: str, field: str) -> list[str]:
    return browser.evaluate(
        f"Array.from(document.querySelectorAll('#{table_id} tbody td[data-field=\"{field}\"]')).map(c => c.innerText)")


def card(browser, field: str) -> str:
    return browser.evaluate(f"document.querySelector('.card[data-field=\"{field}\"] .value').innerText")


def chart_points(browser, chart_id: str) -> int:
    """How many data points a chart was drawn with; and that uPlot drew it on a canvas."""
    assert browser.evaluate(f"document.querySelector('#{chart_id} canvas') !== null"), f"{chart_id} has no canvas"
    return int(browser.evaluate(f"document.getElementById('{chart_id}').dataset.points"))


def n(text: str) -> int:
    return int(text.replace(",", ""))


def test_overview_page_lists_the_tables(scenario, ui, browser):
    show(browser, ui, "", "overview")
    names = browser.evaluate("Array.from(document.querySelectorAll('#tables tbody tr')).map(r => r.dataset.table)")
    assert sorted(names) == sorted([TARGET, V2_TABLE])
    catalog = scenario.env.catalog()
    rows = dict(zip(names, cells(browser, "tables", "rows")))
    for name in names:
        assert n(rows[name]) == catalog.load_table(name).scan().to_arrow().num_rows
    # Everything the page loaded came from the dashboard itself: no CDN, it works offline.
    loaded = browser.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    assert loaded and all(url.startswith(ui.url + "/") for url in loaded), loaded
    assert any(url.endswith("/assets/uPlot.iife.min.js") for url in loaded), loaded
    browser.screenshot(ARTIFACTS / "overview.png")


def test_table_page_shows_the_snapshots_pyiceberg_lists(scenario, ui, browser):
    show(browser, ui, f"table/{TARGET}", "table")
    t = scenario.env.catalog().load_table(TARGET)
    snaps = sorted(t.snapshots(), key=lambda s: s.sequence_number, reverse=True)  # the page lists newest first
    ids = browser.evaluate("Array.from(document.querySelectorAll('#snapshots tbody tr')).map(r => r.dataset.snapshotId)")
    assert ids == [str(s.snapshot_id) for s in snaps]
    assert cells(browser, "snapshots", "operation") == [s.summary.operation.value for s in snaps]
    assert [n(x) for x in cells(browser, "snapshots", "added")] == [
        int(s.summary.additional_properties.get("added-records", 0)) for s in snaps]
    assert [n(x) for x in cells(browser, "snapshots", "live")] == [
        t.scan(snapshot_id=s.snapshot_id).to_arrow().num_rows for s in snaps]
    assert n(card(browser, "rows")) == t.scan().to_arrow().num_rows
    assert n(card(browser, "snapshots")) == len(snaps)
    files = t.inspect.files()
    assert n(card(browser, "data-files")) == sum(1 for c in files["content"].to_pylist() if c == 0)
    dv_row = browser.evaluate("document.querySelector('#delete-files tr[data-kind=\"deletion vectors\"] "
                              "td[data-field=\"files\"]').innerText")
    assert n(dv_row) == sum(1 for f in files["file_format"].to_pylist() if f.upper() == "PUFFIN")
    assert browser.evaluate("document.getElementById('compaction').dataset.needed") in ("true", "false")
    assert chart_points(browser, "rows-chart") == len(snaps)
    assert chart_points(browser, "size-histogram") >= 1
    browser.screenshot(ARTIFACTS / "table.png")


def test_job_page_shows_status_runs_and_the_lag_chart(scenario, ui, browser):
    status = scenario.status()
    sink_id = status["sink_id"]
    show(browser, ui, f"job/{sink_id}", "job")
    assert n(card(browser, "committed-position")) == status["committed_position"]
    assert n(card(browser, "source-latest")) == status["source_latest"]
    assert n(card(browser, "lag")) == status["lag"] == 2
    assert card(browser, "running") == "no"
    t = scenario.env.catalog().load_table(TARGET)
    snaps = sorted((s for s in t.snapshots() if s.summary.additional_properties.get("lakesync.sink-id") == sink_id),
                   key=lambda s: s.sequence_number, reverse=True)
    ids = browser.evaluate("Array.from(document.querySelectorAll('#job-runs tbody tr')).map(r => r.dataset.snapshotId)")
    assert ids == [str(s.snapshot_id) for s in snaps] and len(ids) == 3
    assert cells(browser, "job-runs", "position") == [
        s.summary.additional_properties[f"lakesync.source-position.{sink_id}"] for s in snaps]
    assert [n(x) for x in cells(browser, "job-runs", "added")] == [
        int(s.summary.additional_properties.get("added-records", 0)) for s in snaps]
    # The lag chart: drawn on a canvas with a point around each run and one for now.
    history = ui.get_json(f"/api/v1/job?sink_id={sink_id}")["lag_history"]
    assert chart_points(browser, "lag-chart") == len(history) == 6
    assert chart_points(browser, "runs-chart") == 3
    browser.screenshot(ARTIFACTS / "job.png")
    assert (ARTIFACTS / "job.png").stat().st_size > 10_000
    (ARTIFACTS / "job.json").write_text(json.dumps({"status": status, "lag_history": history}, indent=2))


def test_jobs_page_links_the_sink(scenario, ui, browser):
    show(browser, ui, "jobs", "jobs")
    sinks = browser.evaluate("Array.from(document.querySelectorAll('#jobs tbody tr')).map(r => r.dataset.sinkId)")
    assert sinks == [scenario.status()["sink_id"]]
    assert cells(browser, "jobs", "runs") == ["3"]
    assert cells(browser, "jobs", "lag") == ["2"]
