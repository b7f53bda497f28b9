"""The user docs (README.md, docs/*.md, contrib/*/README.md) hold no dead relative links, name no file outside
the repository, and every fenced block of commands is one the docs runner runs (``sh``) or says it is not."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "contrib").glob("*/README.md"))]
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^([ \t]*)```(\S*)\n(.*?)^\1```", re.S | re.M)
_COMMAND = re.compile(r"^(zagent|python|pip|cd|export)\b")


def dead_links(path: Path) -> list[str]:
    """The relative links of ``path`` whose target file does not exist (anchors and web links are not checked)."""
    dead = []
    for target in _LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        if not (path.parent / target.split("#")[0]).resolve().exists():
            dead.append(target)
    return dead


def untagged_command_blocks(text: str) -> list[str]:
    """The first lines of fenced blocks with no language whose first line is a command (the runner skips them)."""
    return [body.splitlines()[0] for _indent, lang, body in _FENCE.findall(text)
            if not lang and body.strip() and _COMMAND.match(body.lstrip())]


def test_relative_links_point_at_files_of_the_checkout():
    """Every relative link of the user docs reaches a file of this repository (none to ../shared)."""
    found = {str(p.relative_to(ROOT)): dead_links(p) for p in DOCS}
    assert {name: links for name, links in found.items() if links} == {}


def test_the_docs_name_no_folder_outside_the_repository():
    """No page of docs/ points the reader at ../shared (it is not in a clone)."""
    assert [p.name for p in sorted((ROOT / "docs").glob("*.md")) if "../shared" in p.read_text(encoding="utf-8")] == []


def test_every_block_of_commands_is_tagged():
    """A fenced block starting with a command is ```sh (run by the docs runner) or ```text/```console."""
    found = {str(p.relative_to(ROOT)): untagged_command_blocks(p.read_text(encoding="utf-8")) for p in DOCS}
    assert {name: blocks for name, blocks in found.items() if blocks} == {}


def test_the_checks_find_what_they_look_for(tmp_path):
    """The link and block checks find a dead link and an untagged command block (so the tests above can fail)."""
    page = tmp_path / "page.md"
    page.write_text("[design](../shared/DESIGN.md) [ok](page.md) [web](https://x.org)\n\n```\nzagent run a.json\n```\n")
    assert dead_links(page) == ["../shared/DESIGN.md"]
    assert untagged_command_blocks(page.read_text()) == ["zagent run a.json"]
