"""Runs lakesync's Beam transforms for the tests in tests/beam. Executed by the Beam venv's Python
(.tools/beam-venv: apache-beam 2.77.0, pyarrow 25, lakesync pip-installed), never imported by pytest.
Prints one JSON document on standard output.

    beam_driver.py sync JOB CATALOG_JSON --shards N [--runner multi|bundle|prism] [--fail-stage-once DIR]
                   [--fail-commit-once DIR]
    beam_driver.py read-delta TABLE START END OUT.parquet
    beam_driver.py write TABLE CATALOG_JSON IN.parquet OPTIONS_JSON --shards N
    beam_driver.py watch iceberg|delta TABLE CATALOG_JSON OUT_DIR OPTIONS_JSON [--stop-file F]
                   [--runner fnapi|prism]
        (an unbounded read on the DirectRunner: every batch becomes OUT_DIR/<n>.parquet with its event
        time in the file's metadata; ends at the source's end bound, or when the stop file exists)
    beam_driver.py about
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import uuid
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.options.pipeline_options import PipelineOptions

import lakesync
import lakesync.beam as lb


PRISM = Path(__file__).resolve().parents[2] / ".tools/prism/bin/prism"


def options(runner: str, workers: int = 2) -> PipelineOptions:
    if runner == "prism":
        # Beam's portable runner (scripts/setup-prism.sh); the Python SDK harness runs in this process.
        return PipelineOptions(flags=[], runner="PrismRunner", prism_location=str(PRISM), environment_type="LOOPBACK")
    if runner == "multi":
        # Beam's DirectRunner with worker processes (the FnApiRunner; it does not retry bundles).
        return PipelineOptions(direct_running_mode="multi_processing", direct_num_workers=workers)
    # The bundle-based DirectRunner, in process, retries a failed bundle (up to 4 attempts).
    return PipelineOptions(runner="BundleBasedDirectRunner")


def fail_once(marker_dir: str, name: str) -> bool:
    """True the first time only, across retries (a marker file remembers)."""
    marker = Path(marker_dir) / name
    if marker.exists():
        return False
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text("failed once")
    return True


def inject_failures(stage_dir: str | None, commit_dir: str | None) -> None:
    """Worker failures in the middle of bundles (in-process runner only): a shard that has written
    its files fails before emitting them; the committer fails after its commit landed."""
    if stage_dir:
        original = lb._Stage.process

        def process(self, element, target):
            out = list(original(self, element, target))  # the shard's files are written now
            if fail_once(stage_dir, "stage"):
                raise RuntimeError("injected worker failure after the shard wrote its files")
            yield from out

        lb._Stage.process = process
    if commit_dir:
        real = lb._core

        class Job:
            def __init__(self, *args):
                self._job = real.Job(*args)

            def __getattr__(self, name):
                return getattr(self._job, name)

            def commit(self, *args):
                result = self._job.commit(*args)
                if fail_once(commit_dir, "commit"):
                    raise RuntimeError("injected committer failure after the commit landed")
                return result

        class Shim:
            def __getattr__(self, name):
                return Job if name == "Job" else getattr(real, name)

        lb._core = Shim()


class WriteBatch(beam.DoFn):
    """Each batch as its own Parquet file (written aside, then renamed: a reader never sees half a file)."""

    def __init__(self, out_dir: str):
        self._out = Path(out_dir)

    def process(self, batch, timestamp=beam.DoFn.TimestampParam):
        table = pa.Table.from_batches([batch])
        table = table.replace_schema_metadata({"event_time_micros": str(timestamp.micros)})
        name = uuid.uuid4().hex
        pq.write_table(table, self._out / f".{name}.tmp")
        os.rename(self._out / f".{name}.tmp", self._out / f"{name}.parquet")


def watch(a) -> None:
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    options = json.loads(a.options)
    if a.kind == "iceberg":
        read = lb.ReadIcebergChanges(a.table, catalog=json.loads(Path(a.catalog).read_text()), streaming=True,
                                     **options)
    else:
        read = lb.ReadDeltaChanges(a.table, streaming=True, **options)
    if a.runner == "prism":
        options = PipelineOptions(flags=[], runner="PrismRunner", streaming=True, prism_location=str(PRISM),
                                  environment_type="LOOPBACK")
    else:
        # Beam's in-process FnApiRunner resumes the reader's checkpoints (the BundleBasedDirectRunner
        # cannot: it knows only ProcessContinuation, and with streaming=True Beam 2.77 fails to expand
        # unbounded splittable DoFns).
        options = PipelineOptions(flags=[], direct_running_mode="in_memory")
    p = beam.Pipeline(options=options)
    _ = p | read | beam.ParDo(WriteBatch(str(out)))

    def stop_when_asked():
        # The pipeline runs in the main thread (Prism's client installs signal handlers); the process
        # ends when the stop file appears, with the runner's threads still running.
        stop = Path(a.stop_file)
        while not stop.exists():
            time.sleep(0.2)
        print(json.dumps({"finished": False, "errors": []}), flush=True)
        os._exit(0)

    if a.stop_file:
        threading.Thread(target=stop_when_asked, daemon=True).start()
    errors = []
    try:
        p.run().wait_until_finish()
    except Exception as e:  # reported below
        errors.append(repr(e))
    print(json.dumps({"finished": True, "errors": errors}), flush=True)
    os._exit(1 if errors else 0)


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sync")
    s.add_argument("job")
    s.add_argument("catalog")
    s.add_argument("--shards", type=int, default=None)
    s.add_argument("--runner", default="multi")
    s.add_argument("--workers", type=int, default=2)
    s.add_argument("--fail-stage-once")
    s.add_argument("--fail-commit-once")
    r = sub.add_parser("read-delta")
    r.add_argument("table")
    r.add_argument("start", type=int)
    r.add_argument("end", type=int)
    r.add_argument("out")
    w = sub.add_parser("write")
    w.add_argument("table")
    w.add_argument("catalog")
    w.add_argument("input")
    w.add_argument("options")
    w.add_argument("--shards", type=int, default=4)
    wa = sub.add_parser("watch")
    wa.add_argument("kind", choices=["iceberg", "delta"])
    wa.add_argument("table")
    wa.add_argument("catalog")
    wa.add_argument("out")
    wa.add_argument("options")
    wa.add_argument("--stop-file")
    wa.add_argument("--runner", choices=["fnapi", "prism"], default="fnapi")
    sub.add_parser("about")
    a = parser.parse_args()
    if a.cmd == "watch":
        watch(a)
        return

    if a.cmd == "about":
        print(json.dumps({"lakesync": lakesync.__version__, "pyarrow": pa.__version__, "beam": beam.__version__,
                          "module": lakesync._core.__file__, "arrow_built": lakesync._core.ARROW_VERSION}))
        return
    if a.cmd == "sync":
        inject_failures(a.fail_stage_once, a.fail_commit_once)
        out = Path(os.environ["LAKESYNC_BEAM_OUT"])
        with beam.Pipeline(options=options(a.runner, a.workers)) as p:
            summary = p | lb.SyncJob(a.job, catalog=json.loads(Path(a.catalog).read_text()), num_shards=a.shards)
            summary | beam.Map(lambda s: out.write_text(json.dumps(s)))
        print(out.read_text())
        return
    if a.cmd == "read-delta":
        out = a.out
        with beam.Pipeline(options=options("multi")) as p:
            batches = p | lb.ReadDeltaChanges(a.table, start_version=a.start, end_version=a.end,
                                              include_metadata_columns=["_change_type", "_commit_version"])
            (batches
             | beam.combiners.ToList()
             | beam.Map(lambda bs: pq.write_table(pa.Table.from_batches(bs), out)))
        print(json.dumps({"rows": pq.read_metadata(out).num_rows}))
        return
    if a.cmd == "write":
        out = Path(os.environ["LAKESYNC_BEAM_OUT"])
        table = pq.read_table(a.input)
        with beam.Pipeline(options=options("multi")) as p:
            summary = (p
                       | beam.Create(table.to_batches(max_chunksize=50))
                       | lb.WriteIcebergChanges(a.table, catalog=json.loads(Path(a.catalog).read_text()),
                                                num_shards=a.shards, **json.loads(a.options)))
            summary | beam.Map(lambda s: out.write_text(json.dumps(s)))
        print(out.read_text())
        return


if __name__ == "__main__":
    sys.exit(main())
