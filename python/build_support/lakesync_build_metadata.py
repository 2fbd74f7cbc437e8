"""scikit-build-core metadata provider: the wheel requires the pyarrow major version it was compiled
against (the extension links that pyarrow's libarrow, whose soname carries the major version)."""

from __future__ import annotations


def dynamic_metadata(field, settings=None):
    if field != "dependencies":
        raise ValueError(f"lakesync_build_metadata provides 'dependencies', not {field!r}")
    import pyarrow

    major = int(pyarrow.__version__.split(".")[0])
    return [f"pyarrow>={major}.0,<{major + 1}"]


def get_requires_for_dynamic_metadata(settings=None):
    return ["pyarrow>=25,<27"]
