"""No test asserts on elapsed time (the brief: timed assertions flake on shared 2-core machines). A test that must
not hang says so with ``@pytest.mark.timeout(N)``; speed is measured by the benchmarks in ``bench/``."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: ``assert time.monotonic() - started < 5``, ``assert (time.perf_counter() - t0) * 1000 < ...`` and the like
TIMED = re.compile(r"^\s*assert\b.*\b(?:monotonic|perf_counter|time)\(\)\s*-")


def _test_files():
    """Every test file of the repository and of each contrib distribution."""
    return sorted([*ROOT.joinpath("tests").rglob("*.py"), *ROOT.joinpath("contrib").glob("*/tests/**/*.py")])


def test_the_test_files_are_found():
    """The walk sees this file and a contrib distribution's tests (so the check below is not vacuous)."""
    names = {p.relative_to(ROOT).as_posix() for p in _test_files()}
    assert "tests/kernel/test_no_timed_asserts.py" in names and any(n.startswith("contrib/zagent-mcp/") for n in names)


def test_no_test_asserts_on_elapsed_time():
    """No line of a test file asserts on a clock difference."""
    found = [f"{p.relative_to(ROOT)}:{i}" for p in _test_files()
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if TIMED.match(line)]
    assert found == [], "timed assertions (use @pytest.mark.timeout as a hang guard instead): " + ", ".join(found)
