"""The unbounded Iceberg read on Prism, Apache Beam's portable runner (scripts/setup-prism.sh builds it
from Beam's Go module). Not part of scripts/test.sh (building Prism takes minutes of CI time): run
scripts/test-beam-prism.sh. The unbounded read's checks are test_beam_streaming.py's; a SyncJob on
Prism must leave the table `lakesync run` leaves, as on the DirectRunner (test_beam.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from beam_testing import delta_job, delta_rows, extend_delta, iceberg_rows
from delta_tables import SCHEMA, build_table
from lakesync_testing import Warehouse
from test_beam_streaming import check_unbounded_iceberg_read

PRISM = Path(__file__).resolve().parents[2] / ".tools" / "prism" / "bin" / "prism"


@pytest.fixture
def prism():
    if os.environ.get("LAKESYNC_PRISM_TESTS") != "1" or not PRISM.exists():
        pytest.skip(f"Prism runner unavailable: run scripts/test-beam-prism.sh ({PRISM} is built by "
                    "scripts/setup-prism.sh)")
    return PRISM


def test_unbounded_iceberg_read_on_prism(beam, prism, tmp_path):
    check_unbounded_iceberg_read(beam, tmp_path, "prism")


def test_a_sync_job_on_prism_leaves_the_table_lakesync_run_leaves(beam, prism, tmp_path):
    delta = tmp_path / "delta"
    build_table(delta, seed=23, versions=4, partitioned=True)
    cli_wh, prism_wh = Warehouse(tmp_path / "cli"), Warehouse(tmp_path / "prism")
    job = delta_job(tmp_path / "job.yaml", delta, sink_id="orders-sync")
    for step in range(2):
        if step:
            extend_delta(delta, seed=24, versions=4)  # updates and deletes: deletion vectors
        cli_wh.cli("run", job)
        summary = beam.sync(job, prism_wh, 4, tmp_path, runner="prism")
        assert summary["status"] == "committed", summary
    want = delta_rows(delta, SCHEMA.names)
    assert iceberg_rows(cli_wh, "db.orders", SCHEMA.names) == want
    assert iceberg_rows(prism_wh, "db.orders", SCHEMA.names) == want
