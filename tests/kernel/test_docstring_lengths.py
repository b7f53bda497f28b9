"""Module docstrings say what a module is for and its contract in a few lines; design reasoning lives in
docs/architecture.md ("Design notes"), not in the code."""

import ast
import pathlib
import statistics

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MOST_WORDS = 80  # one module docstring, at most
MEDIAN_WORDS = 45  # across the package, at most


def package_files():
    """Every ``.py`` file of the package: kernel/, plugins/ and each contrib distribution's package (no tests)."""
    tops = [ROOT / "kernel", ROOT / "plugins",
            *(p for d in sorted((ROOT / "contrib").iterdir()) if d.is_dir() for p in d.iterdir()
              if p.is_dir() and (p / "__init__.py").exists())]
    return sorted(f for top in tops for f in top.rglob("*.py")
                  if not {"build", "__pycache__", "tests"} & set(f.relative_to(ROOT).parts))


def words(path):
    """The number of words of ``path``'s module docstring (0 without one)."""
    return len((ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").split())


def test_the_walk_finds_the_core_kits_plugins_and_contrib():
    """The walk sees the core, a kit, a plugin and a contrib package (so the checks below are not vacuous)."""
    rels = {p.relative_to(ROOT).as_posix() for p in package_files()}
    assert {"kernel/kernel.py", "kernel/agentkit/lifecycle.py", "plugins/react/loop.py",
            "contrib/zagent-mcp/zagent_mcp/connection.py"} <= rels


@pytest.mark.parametrize("path", package_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_module_docstring_is_a_few_lines(path):
    """No module docstring is over MOST_WORDS words: what the module is for and its contract, no essay."""
    assert words(path) <= MOST_WORDS, (f"{path.relative_to(ROOT)}: its module docstring has {words(path)} words; "
                                       "keep what and the contract, move the reasoning to docs/architecture.md")


def test_module_docstrings_are_short_across_the_package():
    """The median module docstring of the package is at most MEDIAN_WORDS words."""
    assert statistics.median(words(p) for p in package_files()) <= MEDIAN_WORDS
