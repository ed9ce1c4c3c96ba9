"""Start-up (issue 10): ``--version`` imports no toolkit, and a run imports neither pandas nor
matplotlib (``pa.array`` would pull in pandas: results are built from numpy buffers)."""

import subprocess
import sys

from conftest import EXAMPLES

PROBE = """
import sys
from sharebuf.cli import main
rc = main(sys.argv[1:])
heavy = sorted(({m.split('.')[0] for m in sys.modules} | set(sys.modules)) & {'pandas', 'matplotlib', 'pydantic', 'numpy', 'pyarrow', 'rich', 'pyarrow.compute'})
print('HEAVY', ','.join(heavy))
"""


def heavy_modules(*args):
    r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True)
    return r.stdout.strip().splitlines()[-1].removeprefix("HEAVY").strip().split(",")


def test_version_imports_nothing_heavy():
    assert heavy_modules("--version") == [""]


def test_run_skips_pandas_and_matplotlib(tmp_path):
    heavy = heavy_modules("run", str(EXAMPLES / "contract-star-cbr.toml"), "--quiet", "--out", str(tmp_path / "o"))
    assert "pandas" not in heavy and "matplotlib" not in heavy and "pyarrow.compute" not in heavy, heavy
    assert "pyarrow" in heavy  # the probe sees the run's imports
    assert (tmp_path / "o" / "flows.parquet").is_file()
