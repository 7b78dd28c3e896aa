"""`import rstreams` stays light: no pyspark, pyarrow, numpy (or operator modules)."""

from __future__ import annotations

import subprocess
import sys


def test_import_rstreams_loads_no_heavy_modules() -> None:
    code = (
        "import sys, rstreams\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'pyarrow', 'numpy', 'pandas')]\n"
        "ops = [m for m in sys.modules if m.startswith('rstreams.flowable')]\n"
        "print(heavy, ops)\n"
        "assert not heavy, heavy\n"
        "assert not ops, ops\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_flowable_is_reachable_lazily() -> None:
    import rstreams

    assert rstreams.Flowable.just(1).test().values == [1]
