"""Plain helpers of the reliability suites, imported by name (`from object_store_support import ...`).
They live outside conftest.py because `from conftest import` finds whichever conftest module Python
imported first under that name: another folder's, when several folders are named on one pytest
command line."""
from __future__ import annotations

import io
import json

BUCKET = "lakesync-reliability"
ACCESS_KEY, SECRET_KEY = "lakesync-test-key", "lakesync-test-secret"


def key_of(location: str) -> str:
    """s3://bucket/a/b -> a/b."""
    _, rest = location.split("://", 1)
    bucket, key = rest.split("/", 1)
    assert bucket == BUCKET, location
    return key


def referenced_keys(read, metadata_location: str) -> set[str]:
    """Every object a table references: its current metadata file and the ones its log names, every
    snapshot's manifest list, the manifests those name and every file those manifests hold (live or
    deleted: a snapshot still reaches them)."""
    import fastavro

    metadata = json.loads(read(key_of(metadata_location)))
    out = {key_of(metadata_location)} | {key_of(e["metadata-file"]) for e in metadata.get("metadata-log", [])}
    for snapshot in metadata.get("snapshots", []):
        out.add(key_of(snapshot["manifest-list"]))
        for m in fastavro.reader(io.BytesIO(read(key_of(snapshot["manifest-list"])))):
            out.add(key_of(m["manifest_path"]))
            for e in fastavro.reader(io.BytesIO(read(key_of(m["manifest_path"])))):
                out.add(key_of(e["data_file"]["file_path"]))
    return out
