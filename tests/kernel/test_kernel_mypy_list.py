"""The strict type-check list (.ci/mypy-strict.txt, run by .ci/steps/15-mypy.sh) names existing kernel modules."""

import pathlib

ROOT = pathlib.Path(__file__).parent.parent.parent


def test_every_listed_module_exists_in_the_kernel():
    """A renamed or moved module must be renamed in the list too, or mypy would fail on a missing file."""
    lines = (ROOT / ".ci" / "mypy-strict.txt").read_text().splitlines()
    paths = [line.split("#", 1)[0].strip() for line in lines]
    paths = [p for p in paths if p]
    assert paths and all(p.startswith("kernel/") and (ROOT / p).is_file() for p in paths), paths
