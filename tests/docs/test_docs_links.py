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


def slugs(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of markdown file ``path`` (a repeated heading's get ``-1``, ``-2``...)."""
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6}[ \t]+(.+?)[ \t]*#*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        n = 0
        while (slug if not n else f"{slug}-{n}") in found:
            n += 1
        found.add(slug if not n else f"{slug}-{n}")
    return found


def dead_anchors(path: Path) -> list[str]:
    """The links of ``path`` to ``page.md#anchor`` (or ``#anchor`` on itself) whose anchor no heading has."""
    dead = []
    for target in _LINK.findall(path.read_text(encoding="utf-8")):
        page, sep, anchor = target.partition("#")
        if not sep or re.match(r"^[a-z]+:", target) or not (page == "" or page.endswith(".md")):
            continue
        file = path if page == "" else (path.parent / page).resolve()
        if file.exists() and anchor not in slugs(file):
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


def test_anchors_point_at_headings_that_exist():
    """Every ``page.md#anchor`` link of the user docs names a heading of that page (a renumbered section breaks
    the links to it)."""
    found = {str(p.relative_to(ROOT)): dead_anchors(p) for p in DOCS}
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


def test_the_anchor_check_finds_a_dead_anchor(tmp_path):
    """A link to a heading that is not there is found; GitHub's anchors of real headings (numbers, code, a
    repeat) are not (so the anchor test can fail, and only for a dead one)."""
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n### 11. Checkpoints `carry` no policy\n\n## Again\n\n## Again\n\n"
                    "[a](#11-checkpoints-carry-no-policy) [b](#again-1) [c](page.md#title) [d](#9-checkpoints)\n")
    assert dead_anchors(page) == ["#9-checkpoints"]
