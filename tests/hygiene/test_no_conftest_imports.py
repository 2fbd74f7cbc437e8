"""No test module imports names from a conftest.

Every folder's conftest.py is imported under the one module name `conftest`, so `from conftest import
X` gets whichever folder's conftest Python imported first: with several folders on one pytest command
line (tests/jobs before tests/ui, say) that is another folder's, and the import fails or, worse,
finds a same-named helper that does something else. Plain helpers live in a module with a name of its
own (tests/jobs/job_support.py, tests/reliability/object_store_support.py); fixtures stay in conftest.
"""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
IMPORT = re.compile(r"^\s*(from\s+conftest\s+import|import\s+conftest\b)", re.MULTILINE)


def test_no_module_imports_from_conftest():
    offenders = [str(p.relative_to(TESTS)) for p in sorted(TESTS.rglob("*.py"))
                 if IMPORT.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert offenders == [], f"import these names from a helper module of their own instead: {offenders}"
