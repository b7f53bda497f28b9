"""tools/typecheck.py's pure functions: reading and rewriting tools/mypy_baseline.txt, and the verdict on a count.

Unit tests only: no mypy runs here (CI's mypy steps run the tool itself).
"""

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("typecheck", ROOT / "tools" / "typecheck.py")
typecheck = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(typecheck)

BASELINE = """# counts per target
# a second comment line
kernel 0
plugins 12  # being fixed

contrib/zagent-mcp 3
"""


def test_read_baseline_maps_each_target_to_its_count():
    """read_baseline reads ``target count`` lines as a mapping, skipping comments and blank lines."""
    assert typecheck.read_baseline(BASELINE) == {"kernel": 0, "plugins": 12, "contrib/zagent-mcp": 3}


def test_read_baseline_of_an_empty_file_is_empty():
    """An empty baseline (or one of comments only) records no target: every target must then be clean."""
    assert typecheck.read_baseline("") == {}
    assert typecheck.read_baseline("# nothing yet\n\n") == {}


def test_read_baseline_reads_the_repository_file():
    """The committed tools/mypy_baseline.txt parses, and lists the kernel and plugins targets."""
    counts = typecheck.read_baseline(typecheck.BASELINE.read_text())
    assert {"kernel", "plugins"} <= set(counts)
    assert all(isinstance(n, int) and n >= 0 for n in counts.values())


def test_write_baseline_replaces_counts_in_place_keeping_comments_and_order():
    """write_baseline changes only the given targets' numbers; comments, blank lines and order stay."""
    text = typecheck.write_baseline({"plugins": 0}, BASELINE)
    assert text.splitlines() == ["# counts per target", "# a second comment line", "kernel 0", "plugins 0", "",
                                 "contrib/zagent-mcp 3"]


def test_write_baseline_appends_a_new_target_at_the_end():
    """A target the file does not list yet is appended after the existing lines."""
    text = typecheck.write_baseline({"contrib/zagent-ray": 4, "kernel": 1}, BASELINE)
    lines = text.splitlines()
    assert lines[2] == "kernel 1"
    assert lines[-1] == "contrib/zagent-ray 4"
    assert typecheck.read_baseline(text) == {"kernel": 1, "plugins": 12, "contrib/zagent-mcp": 3,
                                             "contrib/zagent-ray": 4}


def test_write_baseline_of_an_empty_file_lists_the_targets_given():
    """Written from nothing, the baseline is one ``target count`` line per target, in the order given."""
    assert typecheck.write_baseline({"kernel": 0, "plugins": 5}, "") == "kernel 0\nplugins 5\n"


def test_write_baseline_leaves_a_commented_out_target_alone():
    """A target mentioned only in a comment is not a line to replace: the new count is appended."""
    text = typecheck.write_baseline({"plugins": 2}, "# plugins 9\n")
    assert text == "# plugins 9\nplugins 2\n"


def test_verdict_fails_with_more_errors_than_recorded():
    """More errors than the baseline's count fail, and the message says both numbers."""
    passed, message = typecheck.verdict("plugins", 13, {"plugins": 12})
    assert not passed
    assert "13" in message and "12" in message


def test_verdict_of_an_unlisted_target_allows_no_error():
    """A target missing from the baseline must be clean: one error fails it."""
    assert typecheck.verdict("contrib/zagent-otel", 1, {})[0] is False
    assert typecheck.verdict("contrib/zagent-otel", 0, {})[0] is True


def test_verdict_passes_with_fewer_errors_and_asks_to_lower_the_count():
    """Fewer errors than recorded pass, with a hint naming the --update command for that target."""
    passed, message = typecheck.verdict("plugins", 3, {"plugins": 12})
    assert passed
    assert "fewer" in message and "--update plugins" in message


@pytest.mark.parametrize("count, word", [(0, "clean"), (4, "as recorded")])
def test_verdict_passes_with_the_recorded_count(count, word):
    """As many errors as recorded pass without a hint: ``clean`` at 0, ``as recorded`` above."""
    passed, message = typecheck.verdict("kernel", count, {"kernel": count})
    assert passed
    assert word in message and "--update" not in message
