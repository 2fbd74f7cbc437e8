"""lakesync: keep Apache Iceberg tables in sync with Delta Lake and Iceberg sources.

The Python package is the C++ engine of the ``lakesync`` command behind a small Pythonic API:

- :class:`Catalog` opens a catalog (the keys of ``--catalog-config``), scans tables and applies
  change streams (:meth:`Catalog.apply`, like ``lakesync apply``);
- :func:`delta_changes` and :func:`iceberg_changes` read change streams (like ``lakesync changes``);
- :func:`run` runs a sync job file once (like ``lakesync run JOB --once``);
- :mod:`lakesync.beam` runs the same jobs on Apache Beam.

Arrow data moves without copies through the Arrow C stream interface: readers are
``pyarrow.RecordBatchReader`` objects, and writers accept anything with ``__arrow_c_stream__``
(pyarrow tables, batches and readers, polars and DuckDB results, ...). Errors raise the exceptions of
:mod:`lakesync.errors`, with the CLI's messages. See docs/python.md.
"""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional, Sequence, Union

import pyarrow as pa  # loads libarrow before the extension needs it

from .errors import *  # noqa: F401,F403
from .errors import LakesyncError

try:
    from . import _core
except ImportError as e:  # most often: installed next to another pyarrow than it was built for
    raise ImportError(
        f"lakesync's extension could not be loaded with pyarrow {pa.__version__}: {e}. The package is compiled "
        "against the pyarrow of the environment it was installed into; reinstall it (pip install .) after "
        "changing pyarrow."
    ) from e

if _core.ARROW_VERSION.split(".")[0] != pa.__version__.split(".")[0]:
    raise ImportError(
        f"lakesync was built against Arrow {_core.ARROW_VERSION} but pyarrow {pa.__version__} is installed; "
        "reinstall lakesync (pip install .) in this environment"
    )

__version__: str = _core.__version__

PathLike = Union[str, "os.PathLike[str]"]

__all__ = [
    "Catalog",
    "delta_changes",
    "iceberg_changes",
    "run",
    "set_log_level",
    "LakesyncError",
    "__version__",
]


class _Stream:
    """Hands one Arrow C stream capsule to pyarrow (PyCapsule protocol)."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        capsule, self._capsule = self._capsule, None
        if capsule is None:
            raise ValueError("this stream was already consumed")
        return capsule


def _reader(capsule: Any) -> pa.RecordBatchReader:
    return pa.RecordBatchReader.from_stream(_Stream(capsule))


def _stream_capsule(changes: Any) -> Any:
    """An Arrow C stream capsule from anything that exposes one (or a pyarrow batch)."""
    if hasattr(changes, "__arrow_c_stream__"):
        return changes.__arrow_c_stream__()
    if isinstance(changes, pa.RecordBatch):
        return pa.RecordBatchReader.from_batches(changes.schema, [changes]).__arrow_c_stream__()
    raise TypeError(
        f"expected an Arrow stream (an object with __arrow_c_stream__, such as a pyarrow Table or "
        f"RecordBatchReader), got {type(changes).__name__}"
    )


def _path(p: PathLike) -> str:
    return os.fspath(p)


class Catalog:
    """An Iceberg catalog.

    ``config`` is either a mapping with the keys of ``--catalog-config`` files and job files
    (``catalog_name``, ``catalog_properties``), the path of such a YAML file, or None for the
    embedded default catalog (``$LAKESYNC_WAREHOUSE`` or ``./lakesync-warehouse``)::

        catalog = lakesync.Catalog({"catalog_properties": {
            "type": "sql", "uri": "sqlite:////data/catalog.db", "warehouse": "file:///data/wh"}})
    """

    def __init__(self, config: Union[Mapping[str, Any], PathLike, None] = None) -> None:
        if config is None:
            self._core = _core.Catalog(None, None)
        elif isinstance(config, Mapping):
            self._core = _core.Catalog(json.dumps(dict(config)), None)
        else:
            self._core = _core.Catalog(None, _path(config))

    @property
    def name(self) -> str:
        """The catalog's name (``catalog_name``)."""
        return self._core.name

    @property
    def properties(self) -> dict[str, str]:
        """The catalog properties it was opened with."""
        return json.loads(self._core.properties_json())

    def list_tables(self, namespace: str) -> list[str]:
        """The tables of a namespace, as ``ns.table`` names."""
        return list(self._core.list_tables(namespace))

    def metadata_location(self, table: str) -> str:
        """The current metadata file of a table."""
        return self._core.metadata_location(table)

    def scan(
        self,
        table: str,
        filter: Optional[str] = None,
        columns: Optional[Sequence[str]] = None,
        snapshot_id: Optional[int] = None,
        ref: str = "main",
        limit: Optional[int] = None,
    ) -> pa.RecordBatchReader:
        """Reads a table (like ``lakesync scan``): deletes applied, ``filter`` (the CLI's SQL-like
        syntax, e.g. ``"amount > 10 AND region = 'eu'"``) pruning files and rows, ``columns``
        projecting, ``snapshot_id`` or ``ref`` choosing the snapshot."""
        capsule = self._core.scan(
            table, filter or "", list(columns) if columns is not None else None, snapshot_id, ref, limit
        )
        return _reader(capsule)

    def apply(
        self,
        table: str,
        changes: Any,
        *,
        source_position: Optional[Union[str, int]] = None,
        source_name: str = "changes",
        **sink_options: Any,
    ) -> dict[str, Any]:
        """Applies a change stream to ``table`` in one commit (like ``lakesync apply``).

        ``changes`` is any Arrow stream (``__arrow_c_stream__``): the table's columns plus the
        control columns. ``sink_options`` are the Iceberg sink's keys (docs/sink.md), e.g.
        ``mode="merge-on-read"``, ``equality_columns=["id"]``, ``change_type_column="_change_type"``,
        ``sequence_number_column="_commit_version"``, ``sink_id="orders"``. As on the command line, a
        change-type column, ``upsert`` or ``equality_columns`` imply merge-on-read unless ``mode`` is
        given. ``source_position`` is recorded with the commit (exactly-once per ``sink_id``).

        Returns the summary ``lakesync apply --json`` prints (``tables``, ``changes``, ...).
        """
        options = dict(sink_options)
        options["table"] = table
        if "mode" not in options and any(
            options.get(k) for k in ("change_type_column", "upsert", "equality_columns")
        ):
            options["mode"] = "merge-on-read"
        position = None if source_position is None else str(source_position)
        summary = self._core.apply(_stream_capsule(changes), json.dumps(options), position, source_name)
        return json.loads(summary)


def delta_changes(
    path: PathLike,
    start_version: Optional[int] = None,
    end_version: Optional[int] = None,
    *,
    start_timestamp: Union[str, int, None] = None,
    end_timestamp: Union[str, int, None] = None,
    columns: Optional[Sequence[str]] = None,
    storage_properties: Optional[Mapping[str, str]] = None,
) -> pa.RecordBatchReader:
    """A Delta table's Change Data Feed (like ``lakesync changes --source delta``).

    Exactly one start bound (``start_version`` or ``start_timestamp``: ISO-8601 text or epoch
    milliseconds); the end bound defaults to the latest version; both inclusive. The reader yields the
    table's columns then ``columns`` (default ``_change_type``, ``_commit_version``,
    ``_commit_timestamp``, the columns of deltalake's ``load_cdf``). The whole range is validated
    before the reader is returned. ``storage_properties`` reach object stores (``s3.*``, ``gcs.*``).
    """
    options = {
        "start_version": start_version,
        "end_version": end_version,
        "start_timestamp": start_timestamp,
        "end_timestamp": end_timestamp,
        "columns": list(columns) if columns is not None else None,
        "storage_properties": dict(storage_properties) if storage_properties else None,
    }
    return _reader(_core.delta_changes(_path(path), json.dumps(options)))


def iceberg_changes(
    catalog: Catalog,
    table: str,
    *,
    columns: Optional[Sequence[str]] = None,
    after_sequence_number: Optional[int] = None,
    **options: Any,
) -> pa.RecordBatchReader:
    """An Iceberg table's changelog (like ``lakesync changes --source iceberg``).

    ``options`` are the job configuration's keys (docs/changelog.md), with Beam's meaning:
    ``from_snapshot``/``start_snapshot_id`` (inclusive), ``to_snapshot``/``end_snapshot_id``,
    ``from_timestamp``/``start_timestamp``, ``to_timestamp``/``end_timestamp``,
    ``starting_strategy``, ``equality_columns``, ``filter``, ``keep``, ``drop``. ``columns`` picks
    and orders the control columns (default all five, as the CLI prints them).
    ``after_sequence_number`` resumes after a position (the sink's committed sequence number).
    """
    doc = dict(options)
    doc["table"] = table
    if columns is not None:
        doc["include_metadata_columns"] = list(columns)
    doc["after_sequence_number"] = after_sequence_number
    return _reader(catalog._core.iceberg_changes(json.dumps(doc)))


def run(job: PathLike, catalog: Optional[Catalog] = None) -> dict[str, Any]:
    """Runs a sync job file once (like ``lakesync run JOB --once``) and returns its summary line.

    ``catalog`` is the job's default catalog (where the sink writes unless its own
    ``catalog_properties`` say otherwise); None means the embedded default, as for the CLI.
    """
    return json.loads(_core.run(_path(job), catalog._core if catalog is not None else None))


def set_log_level(level: str, format: str = "text") -> None:
    """Sets the engine's log level (``debug``, ``info``, ``warn``, ``error``, ``off``) and format
    (``text`` or ``json``); logs go to standard error."""
    _core.set_log_level(level, format)
