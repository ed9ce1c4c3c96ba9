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


def test_run_imports_neither_numpy_ma_nor_the_process_pool(tmp_path):
    """np.percentile imports numpy.ma (via np.unique), sweep's pool multiprocessing, and
    pyarrow.parquet pyarrow.fs and ssl: none is on a run's path (results._pct,
    results.write_parquet; sweep imports the pool when it starts one)."""
    code = ("import sys\nfrom sharebuf.cli import main\n"
            f"main(['run', {str(EXAMPLES / 'contract-star-cbr.toml')!r}, '--quiet', '--out', {str(tmp_path / 'o')!r}])\n"
            "print(sorted(m for m in sys.modules if m in ('numpy.ma', 'concurrent.futures.process', 'multiprocessing', 'difflib',\n"
            "                                              'pyarrow.parquet', 'pyarrow.fs', 'ssl')))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stdout


def test_percentile_is_numpys_bit_for_bit():
    """results._pct replaces np.percentile (linear method) on the summary's path: the same
    float64, bit for bit (tolerance 0, sign of zero included), on 8,000+ arrays of sizes 1..39,
    100, 1000 and 12,345 with ties, constant runs, wide dynamic range and near-equal values, at
    the quantiles the summary uses and the ends; NaN and inf as numpy."""
    import math

    import numpy as np

    from sharebuf.results import _pct

    rng = np.random.default_rng(1)
    checked = 0
    for n in [*range(1, 40), 100, 1000, 12345]:
        for trial in range(30):
            x = [rng.random(n) * 10, rng.integers(0, 5, n).astype(float), np.exp(rng.normal(0, 5, n)),
                 rng.random(n) * 1e-12 + 1.0, np.full(n, 3.3)][trial % 5]
            for q in (0, 1, 25, 50, 90, 99, 100):
                want, got = float(np.percentile(x, q)), _pct(x, q)
                assert want.hex() == got.hex(), (n, q, want, got)
                checked += 1
    assert checked == 42 * 30 * 7
    assert _pct(np.array([]), 50) is None
    assert math.isnan(_pct(np.array([1.0, np.nan, 2.0]), 50))
    with np.errstate(invalid="ignore"):
        for q in (50, 99, 100):
            want = float(np.percentile(np.array([1.0, np.inf]), q))
            assert want.hex() == _pct(np.array([1.0, np.inf]), q).hex()


def test_git_commit_from_one_status_query():
    """provenance reads the commit and '+dirty' from one `git status --porcelain=v2 --branch`."""
    from sharebuf.provenance import _parse_git_status

    oid = "959cbe406447c36a291ae7784111986a69547cd7"
    head = f"# branch.oid {oid}\n# branch.head startup2\n"
    assert _parse_git_status(head) == oid
    assert _parse_git_status(head + "1 .M N... 100644 100644 100644 aa bb python/sharebuf/cli.py\n") == oid + "+dirty"
    assert _parse_git_status("# branch.oid (initial)\n# branch.head main\n") is None
    assert _parse_git_status("") is None


def test_git_commit_matches_git(tmp_path):
    """In this checkout, the recorded commit is `git rev-parse HEAD` (+dirty iff `git status
    --porcelain --untracked-files=no` lists a file), as the two queries it replaces said."""
    from pathlib import Path

    from sharebuf import provenance

    root = Path(provenance.__file__).resolve().parents[2]
    if not (root / ".git").exists():
        import pytest

        pytest.skip("not a git checkout")
    rev = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, check=True).stdout.strip()
    provenance._GIT.clear()
    assert provenance.git_commit() == rev + ("+dirty" if dirty else "")


def test_parquet_files_are_pyarrow_parquets_bytes(tmp_path):
    """results.write_parquet (no pyarrow.parquet import) writes the bytes
    pyarrow.parquet.write_table(..., compression="zstd") writes: every table of a run, with the
    run's key-value metadata, compared byte for byte, including the files the run wrote."""
    import pyarrow.parquet as pq

    from sharebuf.results import write_parquet
    from sharebuf.runner import run

    res = run("default", out=tmp_path / "o", sets={"max_ms": 20, "output.queue_sample_us": 100})
    assert set(res.tables) == {"flows", "queries", "buffer", "queue_occupancy"}
    for name, t in res.tables.items():
        assert t.num_rows > 0, name
        t = t.replace_schema_metadata({**(t.schema.metadata or {}), **res.parquet_metadata})
        pq.write_table(t, tmp_path / "public.parquet", compression="zstd")
        write_parquet(t, tmp_path / "ours.parquet")
        want = (tmp_path / "public.parquet").read_bytes()
        assert (tmp_path / "ours.parquet").read_bytes() == want, name
        assert (tmp_path / "o" / f"{name}.parquet").read_bytes() == want, name


def test_failed_run_reaps_the_background_git_query(tmp_path):
    """The command line starts provenance's git query before validating; a run that fails first
    still exits with its one error line: the unanswered query is stopped at exit (no
    "subprocess still running" ResourceWarning, shown here with -W default)."""
    r = subprocess.run([sys.executable, "-W", "default", "-m", "sharebuf", "run", str(tmp_path / "missing.toml")],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.splitlines() == [f"error: scenario '{tmp_path / 'missing.toml'}': no such file "
                                     "(bundled scenarios: abm-eval, default, standard)"], r.stderr
