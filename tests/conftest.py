"""Shared pytest set-up: where the build and the shared corpora are.

Test modules read LAKESYNC_BUILD_DIR (the CMake build with the lakesync binary and the probe programs)
and LAKESYNC_SHARED_DIR (../shared: specs and corpora). This file runs before they are imported and
fills both in when the caller did not.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _find_shared() -> Path:
    for candidate in (REPO.parent / "shared", Path("/work/shared")):
        if (candidate / "corpora").is_dir():
            return candidate
    return REPO.parent / "shared"


os.environ.setdefault("LAKESYNC_BUILD_DIR", str(REPO / "build"))
os.environ.setdefault("LAKESYNC_SHARED_DIR", str(_find_shared()))
# `lakesync run` keeps its run history (for `lakesync status`) under LAKESYNC_STATE_DIR; tests never
# write into the user's ~/.local/state.
os.environ.setdefault("LAKESYNC_STATE_DIR", tempfile.mkdtemp(prefix="lakesync-test-state-"))
