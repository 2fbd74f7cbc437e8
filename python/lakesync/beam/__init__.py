"""Apache Beam transforms over lakesync's core: the same jobs, scaled out.

- :class:`SyncJob` — ``pipeline | SyncJob("job.yaml")``: one run of a ``lakesync run`` job file
  (the same source and sink keys, the same progress tokens in the target's snapshot summaries), so a
  job can move between the CLI and Beam and resume exactly where the other stopped.
- :class:`ReadDeltaChanges`, :class:`ReadIcebergChanges` — change streams as a ``PCollection`` of
  ``pyarrow.RecordBatch`` (table columns plus control columns), one read task per source commit, read
  in parallel; bounded, or unbounded with ``streaming=True`` (polling for new commits).
- :class:`WriteIcebergChanges` — applies a ``PCollection`` of record batches (or anything with
  ``__arrow_c_stream__``) to one Iceberg table in a single commit.

The shape (docs/scale-out.md): the driver plans (commit range → read tasks, the target table pinned
to its current metadata); workers read tasks in parallel and split their batches by key hash into
``num_shards`` shards (the sink's Beam key); each shard collapses its keys, writes its data files and
resolves its deleted keys to positions in the pinned state; positions are grouped by data file so
each data file gets exactly one deletion vector; a single committer per table commits everything
with the progress token. Every step is the C++ core (``lakesync._core``); this module only wires
them into Beam. A retried bundle leaves at most unreferenced files behind, never duplicates: only
the committer's output becomes visible, and a retried committer whose first try landed recognises
its own commit.
"""

from __future__ import annotations

import json
import os
import zlib
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import apache_beam as beam
import pyarrow as pa
from apache_beam.io.restriction_trackers import OffsetRange, OffsetRestrictionTracker
from apache_beam.io.watermark_estimators import ManualWatermarkEstimator
from apache_beam.transforms.core import WatermarkEstimatorProvider
from apache_beam.transforms.window import TimestampedValue
from apache_beam.utils.timestamp import MIN_TIMESTAMP, Duration, Timestamp

import lakesync
from lakesync import _core, _reader, _stream_capsule

__all__ = ["SyncJob", "ReadDeltaChanges", "ReadIcebergChanges", "WriteIcebergChanges"]

CatalogSpec = Union[Mapping[str, Any], str, "os.PathLike[str]", "lakesync.Catalog", None]


def _catalog_config(catalog: CatalogSpec) -> Optional[dict]:
    """A picklable form of a catalog: its resolved configuration (workers reopen it)."""
    if catalog is None:
        return None
    if not isinstance(catalog, lakesync.Catalog):
        catalog = lakesync.Catalog(catalog)
    return json.loads(catalog._core.config_json())


def _open_catalog(config: Optional[dict]) -> Optional["_core.Catalog"]:
    return None if config is None else _core.Catalog(json.dumps(config), None)


def _open_source(kind: str, options: Mapping[str, Any], catalog: Optional[dict]) -> "_core.Source":
    """A job's source block opened by the core (on the driver, and again on each worker)."""
    return _core.Source(kind, json.dumps(options), _open_catalog(catalog))


def _batches(capsule: Any) -> Iterable[pa.RecordBatch]:
    reader = _reader(capsule)
    for batch in reader:
        if batch.num_rows:
            yield batch


def _stream_of(batches: Iterable[pa.RecordBatch]) -> Any:
    """One Arrow stream over a group's batches (streamed, not concatenated)."""
    it = iter(batches)
    first = next(it, None)
    if first is None:
        return None

    def chain():
        yield first
        yield from it

    return pa.RecordBatchReader.from_batches(first.schema, chain()).__arrow_c_stream__()


def _as_batches(element: Any) -> Iterable[pa.RecordBatch]:
    if isinstance(element, pa.RecordBatch):
        yield element
    else:
        yield from _batches(_stream_capsule(element))


def _without_positions(staged_json: str) -> str:
    doc = json.loads(staged_json)
    doc["positions"] = []
    return json.dumps(doc)


class _Shard(beam.DoFn):
    """(batch) → (shard, rows of that shard): the sink's key-hash shards (plan/key_shards.h)."""

    def setup(self):
        self._next = 0

    def process(self, element, target, num_shards):
        if target.get("skipped"):
            return
        keys = target.get("key_columns") or []
        for batch in _as_batches(element):
            if not keys:  # append mode: no keys to keep together, batches go round-robin
                self._next = (self._next + 1) % num_shards
                yield self._next, batch
                continue
            stream = pa.RecordBatchReader.from_batches(batch.schema, [batch]).__arrow_c_stream__()
            for shard, capsule in _core.split_by_shard(stream, keys, num_shards):
                for part in _batches(capsule):
                    yield shard, part


class _Steps:
    """Opens the C++ object that runs the staged steps, once per worker (DoFn.setup)."""

    def __init__(self, factory):
        self._factory = factory
        self._steps = None

    def get(self):
        if self._steps is None:
            self._steps = self._factory()
        return self._steps


class _Stage(beam.DoFn):
    def __init__(self, factory):
        self._steps = _Steps(factory)

    def setup(self):
        self._steps.get()

    def process(self, element, target):
        _, batches = element
        stream = _stream_of(batches)
        if stream is None:
            return
        yield self._steps.get().stage(json.dumps(target), stream)


class _WriteDeletes(beam.DoFn):
    def __init__(self, factory):
        self._steps = _Steps(factory)

    def setup(self):
        self._steps.get()

    def process(self, element, target):
        _, entries = element
        yield self._steps.get().write_deletes(json.dumps(target), list(entries))


def _positions_by_file_group(staged_json: str, num_groups: int):
    """Each data file's positions keyed by a hash of its path: one group writes a file's vector."""
    for entry in json.loads(staged_json)["positions"]:
        path = entry["data_file"]["file-path"]
        yield zlib.crc32(path.encode()) % num_groups, json.dumps(entry)


def _apply_staged(pcoll, factory, target, num_shards: int, commit_fn, label: str):
    """The shared middle and end of every write: shard, stage, write deletes, commit once."""
    keyed = pcoll | f"{label}Shard" >> beam.ParDo(_Shard(), target=beam.pvalue.AsSingleton(target),
                                                   num_shards=num_shards)
    staged = (
        keyed
        | f"{label}GroupByShard" >> beam.GroupByKey()
        | f"{label}StageShard" >> beam.ParDo(_Stage(factory), target=beam.pvalue.AsSingleton(target))
    )
    deletes = (
        staged
        | f"{label}PositionsByDataFile" >> beam.FlatMap(_positions_by_file_group, num_shards)
        | f"{label}GroupByDataFile" >> beam.GroupByKey()
        | f"{label}WriteDeletes" >> beam.ParDo(_WriteDeletes(factory), target=beam.pvalue.AsSingleton(target))
    )
    shards_for_commit = staged | f"{label}DropPositions" >> beam.Map(_without_positions)
    return target | f"{label}Commit" >> beam.Map(
        commit_fn,
        shards=beam.pvalue.AsList(shards_for_commit),
        deletes=beam.pvalue.AsList(deletes),
    )


class SyncJob(beam.PTransform):
    """One run of a ``lakesync run`` job file, applied at the pipeline root::

        with beam.Pipeline() as p:
            summary = p | lakesync.beam.SyncJob("job.yaml")

    The driver plans the run when the pipeline is built: it reads the position the sink committed to
    the target, cuts the source commits after it into read tasks (one per Delta version or Iceberg
    snapshot; an initial import is one task), and pins the target table (creating it if needed).
    The output is a ``PCollection`` with one element: the run's summary, the same dictionary as
    ``lakesync run`` prints. ``num_shards`` overrides the sink's ``num_shards``. The job file (and
    local source and warehouse paths) must be readable by the workers.

    Schema changes (``schema_evolution``, docs/jobs.md) are followed as by ``lakesync run``: a range
    across source schema changes is split into the same parts (the engine plans them), each staged
    and committed in turn with its schema change; the summary is then the last part's, with the whole
    ``range`` and each part's summary under ``parts``.
    """

    def __init__(self, job: Union[str, "os.PathLike[str]"], catalog: CatalogSpec = None,
                 num_shards: Optional[int] = None) -> None:
        super().__init__()
        self._job_path = os.path.abspath(os.fspath(job))
        self._catalog = _catalog_config(catalog)
        self._num_shards = num_shards

    def _open(self):
        return _core.Job(self._job_path, _open_catalog(self._catalog))

    def expand(self, pbegin):
        job = self._open()
        plan = json.loads(job.plan())
        num_shards = self._num_shards or job.num_shards
        job_path, catalog = self._job_path, self._catalog

        def factory():
            return _core.Job(job_path, _open_catalog(catalog))

        def commit(target, shards, deletes, part=None):
            doc = dict(plan)
            doc["target"] = target
            doc["part"] = part
            return json.loads(factory().commit(json.dumps(doc), list(shards), list(deletes)))

        if plan["plan"]["nothing_new"] or plan["target"] is None:
            return pbegin | "Summary" >> beam.Create([None]) | "Commit" >> beam.Map(
                lambda _: commit(None, [], []))

        read_steps = _Steps(factory)

        def read(task):
            steps = read_steps.get()
            yield from _batches(steps.read(task["from"], task["through"], task["snapshot"]))

        # The engine splits the range at the source's schema changes (schema_evolution: additive), as
        # `lakesync run` does: each part is staged and committed in turn, its schema change with its
        # data. A later part's target is prepared after the part before it committed (it waits on
        # that commit's output), so it pins the table with the earlier schema changes and rows.
        parts = plan["parts"]
        commits = []
        for i, part in enumerate(parts):
            label = "" if i == 0 else f"Part{i}"
            if i == 0:
                target = pbegin | "Target" >> beam.Create([plan["target"]])
            else:
                target = commits[-1] | f"{label}Prepare" >> beam.Map(
                    lambda _, part=part: json.loads(factory().prepare(json.dumps(part))))
            tasks = (
                pbegin
                | f"{label}Tasks" >> beam.Create(part["tasks"])
                | f"{label}Distribute" >> beam.Reshuffle()
                | f"{label}Read" >> beam.FlatMap(read)
            )
            part_commit = (lambda t, shards, deletes, part=part:
                           commit(t, shards, deletes, part if len(parts) > 1 else None))
            commits.append(_apply_staged(tasks, factory, target, num_shards, part_commit, label))
        if len(commits) == 1:
            return commits[0]

        def summarize(last, *earlier):
            # One summary for the run: the last part's, over the whole range, with every part's own.
            summary = dict(last)
            summary["range"] = {"from": plan["plan"]["from"], "through": plan["plan"]["through"]}
            summary["parts"] = list(earlier) + [last]
            return summary

        return commits[-1] | "Summary" >> beam.Map(summarize, *[beam.pvalue.AsSingleton(c) for c in commits[:-1]])


class _ReadChanges(beam.PTransform):
    _type = ""

    def __init__(self, catalog: CatalogSpec = None, **options: Any) -> None:
        super().__init__()
        self._options = options
        self._catalog = _catalog_config(catalog)

    def _open(self):
        return _open_source(self._type, self._options, self._catalog)

    def expand(self, pbegin):
        source = self._open()  # on the driver: bad options fail when the pipeline is built
        kind, options, catalog = self._type, self._options, self._catalog
        opened = {}

        def read(ordinal):
            if "source" not in opened:
                opened["source"] = _open_source(kind, options, catalog)
            yield from _batches(opened["source"].read(ordinal, ordinal))

        if options.get("streaming"):
            # Each commit is read where it was found, right after it: a shuffle in between would hold
            # the reads back on runners that finish a stage before the next (Beam's FnApiRunner), and
            # one commit's files are read in parallel by the core's own executor anyway.
            return (
                pbegin
                | "Start" >> beam.Create([json.dumps({"type": kind, "options": options, "catalog": catalog})])
                | "PollCommits" >> beam.ParDo(_PollCommits())
                | "Read" >> beam.FlatMap(read)
            )
        bounds = source.range()
        return (
            pbegin
            | "Commits" >> beam.Create(source.ordinals(*bounds) if bounds else [])
            | "Distribute" >> beam.Reshuffle()
            | "Read" >> beam.FlatMap(read)
        )


# Unbounded reads: a splittable DoFn whose restriction is the range of commit ordinals (Delta versions,
# Iceberg sequence numbers) still to emit, [next, _NO_END). Each call emits the commits the source has
# after the last one claimed, then checkpoints (defer_remainder) for poll_interval_seconds; the runner
# resumes the residual [last + 1, _NO_END). Progress therefore lives in the runner's checkpoint, not in
# this process. The stream ends at the source's end bound (to_snapshot, end_version, ...) when one is
# set, and otherwise runs until the pipeline is drained or cancelled.
_NOT_STARTED = -1
_NO_END = 2**62


class _CheckpointOnlyTracker(OffsetRestrictionTracker):
    """Splits only to checkpoint: a dynamic split of [next, _NO_END) would leave a residual far beyond
    any commit, polling for nothing forever."""

    def try_split(self, fraction_of_remainder):
        if fraction_of_remainder != 0:
            return None
        return super().try_split(fraction_of_remainder)


class _CommitRange(beam.transforms.core.RestrictionProvider):
    def initial_restriction(self, element):
        return OffsetRange(_NOT_STARTED, _NO_END)

    def create_tracker(self, restriction):
        return _CheckpointOnlyTracker(restriction)

    def restriction_size(self, element, restriction):
        return 1  # unknown: commits that do not exist yet

    def truncate(self, element, restriction):
        return None  # drained: stop polling


class _CommitTimeWatermark(WatermarkEstimatorProvider):
    """The watermark is the commit time of the last commit emitted: later commits are never late."""

    def initial_estimator_state(self, element, restriction):
        return MIN_TIMESTAMP

    def create_watermark_estimator(self, estimator_state):
        return ManualWatermarkEstimator(estimator_state)


class _PollCommits(beam.DoFn):
    """(source description) → the ordinals of its commits as they appear, each stamped with its commit
    time (the event time of the changes it carries)."""

    def setup(self):
        self._source = None

    def _open(self, element):
        if self._source is None:
            doc = json.loads(element)
            self._source = _open_source(doc["type"], doc["options"], doc["catalog"])
        return self._source

    @beam.DoFn.unbounded_per_element()
    def process(self, element, tracker=beam.DoFn.RestrictionParam(_CommitRange()),
                watermark=beam.DoFn.WatermarkEstimatorParam(_CommitTimeWatermark())):
        source = self._open(element)
        start = tracker.current_restriction().start
        last = None if start == _NOT_STARTED else start - 1  # the last commit emitted before this call
        latest = source.latest()  # asks the source again (Delta lists its log, Iceberg reloads)
        ordinal = None if latest is None else source.first() if last is None else source.next_after(last)
        end = source.end()
        while ordinal is not None and ordinal <= latest and (end is None or ordinal <= end):
            if not tracker.try_claim(ordinal):
                return
            millis = source.commit_timestamp_ms(ordinal)
            if millis is None:
                yield ordinal
            else:
                at = Timestamp(micros=millis * 1000)
                yield TimestampedValue(ordinal, at)
                if at > watermark.current_watermark():
                    watermark.set_watermark(at)
            last = ordinal
            ordinal = source.next_after(ordinal)
        if end is not None and ((last is not None and last >= end) or (ordinal is not None and ordinal > end)):
            tracker.try_claim(_NO_END)  # past the end bound: the stream is complete
            return
        tracker.defer_remainder(Duration(seconds=source.poll_interval_seconds))


class ReadDeltaChanges(_ReadChanges):
    """A Delta table's Change Data Feed as a ``PCollection`` of ``pyarrow.RecordBatch``.

    Keyword arguments are Beam's ``delta_lake_cdc`` keys (docs/jobs.md): ``table`` (the path),
    ``start_version`` or ``start_timestamp``, ``end_version`` or ``end_timestamp``,
    ``include_metadata_columns``, ``storage_properties``. One read task per version. With
    ``streaming=True`` the read polls for new versions like :class:`ReadIcebergChanges` and stops at
    ``end_version``/``end_timestamp`` when one is set.
    """

    _type = "delta_lake_cdc"

    def __init__(self, table: str, **options: Any) -> None:
        super().__init__(None, table=table, **options)


class ReadIcebergChanges(_ReadChanges):
    """An Iceberg table's changelog as a ``PCollection`` of ``pyarrow.RecordBatch``.

    Keyword arguments are the ``iceberg_cdc`` keys (docs/changelog.md): ``table``,
    ``from_snapshot``/``to_snapshot`` (inclusive), timestamps, ``starting_strategy``,
    ``include_metadata_columns``, ``equality_columns``, ``filter``, ``keep``/``drop``, and the
    catalog (``catalog=`` or ``catalog_properties``). One read task per snapshot.

    With ``streaming=True`` the read is unbounded: it polls the table every ``poll_interval_seconds``
    (default 60) and emits each new snapshot's changes, stamped with the snapshot's commit time, until
    the end bound (``to_snapshot``/``to_timestamp``) when one is set, or until the pipeline is drained
    or cancelled. It needs a runner that resumes splittable-DoFn checkpoints: Dataflow, Flink, Spark's
    portable runner, or the DirectRunner's FnApiRunner (``direct_running_mode`` ``in_memory`` or
    ``multi_processing``; not the BundleBasedDirectRunner). Where it resumes after a restart is the
    runner's checkpoint: a new pipeline starts again from the start bound.
    """

    _type = "iceberg_cdc"

    def __init__(self, table: str, catalog: CatalogSpec = None, **options: Any) -> None:
        super().__init__(catalog, table=table, **options)


class WriteIcebergChanges(beam.PTransform):
    """Applies a ``PCollection`` of change batches to one Iceberg table, in one commit.

    ``sink_options`` are the Iceberg sink's keys (docs/sink.md; ``num_shards`` sets the shard count).
    ``source_position`` (with ``sink_id``) is recorded in the commit for exactly-once. With
    ``schema_evolution="additive"`` the table follows the input's schema as a job's does (docs/jobs.md:
    new columns, widened types; incompatible changes fail before anything is written), planned from
    the first batch's schema and committed with the data; the default ``"none"`` never changes the
    table's schema, as :meth:`lakesync.Catalog.apply`. The output has one element: the summary
    dictionary of :meth:`lakesync.Catalog.apply`.
    """

    def __init__(self, table: str, catalog: CatalogSpec = None, *, source_position: Union[str, int, None] = None,
                 schema_evolution: str = "none", **sink_options: Any) -> None:
        super().__init__()
        options = dict(sink_options)
        options["table"] = table
        if "mode" not in options and any(
            options.get(k) for k in ("change_type_column", "upsert", "equality_columns")
        ):
            options["mode"] = "merge-on-read"
        self._options = options
        self._catalog = _catalog_config(catalog) or _catalog_config(lakesync.Catalog())
        self._position = None if source_position is None else str(source_position)
        self._schema_evolution = schema_evolution

    def expand(self, pcoll):
        options, catalog, position = self._options, self._catalog, self._position
        evolution = self._schema_evolution

        def factory():
            return _core.Sink(_core.Catalog(json.dumps(catalog), None), json.dumps(options))

        num_shards = factory().num_shards

        def prepare(batch):
            stream = pa.RecordBatchReader.from_batches(batch.schema, [batch]).__arrow_c_stream__()
            return json.loads(factory().prepare(stream, position, evolution))

        def commit(target, shards, deletes):
            return json.loads(factory().commit(json.dumps(target), position, list(shards), list(deletes)))

        batches = pcoll | "Batches" >> beam.FlatMap(_as_batches)
        first = batches | "OneBatch" >> beam.combiners.Sample.FixedSizeGlobally(1) | beam.FlatMap(lambda s: s)
        target = first | "Prepare" >> beam.Map(lambda b: prepare(b.slice(0, 0)))
        return _apply_staged(batches, factory, target, num_shards, commit, "")
