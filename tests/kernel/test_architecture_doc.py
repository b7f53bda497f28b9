"""docs/architecture.md and the README's "Layout" section describe the shape that exists (so they stay in step)."""

import configparser
import importlib.util
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
LAYOUT = README[README.index("## Layout"):].split("\n## ", 1)[0]
_spec = importlib.util.spec_from_file_location("kernel_lines", ROOT / "tools" / "kernel_lines.py")
kernel_lines = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kernel_lines)
CORE = {rel for rel, v in kernel_lines.analyse(kernel_lines.kernel_files()).items() if v["core"]}


def _section(title):
    return DOC[DOC.index(f"## {title}"):].split("\n## ", 1)[0]


def _plugins():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    return [line.split("=", 1)[0].strip() for line in cfg["options.entry_points"]["zagent"].strip().splitlines()]


def test_the_core_table_names_every_core_module_and_no_other():
    """The core table of docs/architecture.md names each core module (tools/kernel_lines.py's core) exactly."""
    named = {n for n in re.findall(r"`([\w/]+\.py)`", _section("The core")) if not n.startswith(("tools/", "tests/"))}
    assert named == CORE


def test_both_name_the_kits_plugins_and_contrib_distributions():
    """docs/architecture.md and the README Layout name the four kits, every built-in plugin and every contrib
    distribution."""
    contrib = sorted(p.name for p in (ROOT / "contrib").iterdir() if p.is_dir())
    for text in (DOC, LAYOUT):
        names = ("testing", "providerkit", "agentkit", "speckit", *_plugins(), *contrib)
        missing = [n for n in names if not re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text)]
        assert not missing


def test_the_layout_section_links_the_architecture_doc_and_it_names_design():
    """The README Layout section links docs/architecture.md, which opens with its departures from DESIGN.md."""
    assert "(docs/architecture.md)" in LAYOUT
    assert DOC.index("## Where this departs from DESIGN.md") < DOC.index("## The core")
