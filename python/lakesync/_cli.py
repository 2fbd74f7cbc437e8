"""The ``lakesync`` console command of the Python package (``pipx install lakesync-*.whl``): runs the
same C++ command-line tool the wheel carries in ``lakesync/bin/``, which loads Arrow from the pyarrow
package the wheel depends on (its RUNPATH points there), so there is no second copy of Arrow."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def binary() -> Path:
    return Path(__file__).resolve().parent / "bin" / "lakesync"


def main() -> None:
    exe = binary()
    if not exe.is_file():
        sys.stderr.write(f"lakesync: the command-line tool is not part of this installation ({exe} is missing); "
                         "it is in wheels built by pip from the repository (docs/install.md)\n")
        raise SystemExit(127)
    # exec, not a child process: signals, exit status and the terminal are the tool's own.
    os.execv(exe, [str(exe), *sys.argv[1:]])
