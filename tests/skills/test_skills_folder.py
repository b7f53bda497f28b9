"""Skill files: Markdown round trips, a person's edits, backups, registry writes."""

import pytest
from zagent import ConfigError
from zagent.plugins.skills import Skill, SkillRegistry, markdown

from .conftest import price_skill


def registry(folder, clock):
    return SkillRegistry(folder, clock=clock).load()


def test_markdown_round_trips_every_content_field():
    """render() then load() gives back the same skill, multi-line and odd strings included."""
    skill = Skill(name="odd-one", description="Has: a colon", when_to_use='"quoted" and\nmulti-line',
                  instructions="Step 1\n\nStep 2: go", tool_sequence=["a.b", "c"], examples=["3 things", "true"],
                  version=3, provenance=["run-1"], created=12.5, content_hash="00ff")
    assert markdown.load(markdown.render(skill)) == skill


def test_registered_skill_is_a_readable_file(folder, clock):
    """register() writes <name>.md with a key: value header and the instructions as body."""
    registry(folder, clock).register(price_skill())
    text = (folder / "price-totals.md").read_text()
    assert text.startswith("---\nname: price-totals\nversion: 1\n")
    assert text.rstrip().endswith(price_skill()["instructions"])
    assert not list(folder.glob("*.tmp"))


def test_folder_round_trips_through_a_persons_edit(folder, clock):
    """A person edits the file; a fresh registry reads the edit and marks the skill as edited by a human."""
    registry(folder, clock).register(price_skill())
    path = folder / "price-totals.md"
    path.write_text(path.read_text().replace("then answer with the total.", "then answer in euros."))
    skill = registry(folder, clock)["price-totals"]
    assert skill.instructions.endswith("then answer in euros.") and skill.edited_by_human


def test_untouched_file_is_not_marked_as_edited(folder, clock):
    """A file zagent wrote and nobody changed keeps edited_by_human False."""
    registry(folder, clock).register(price_skill())
    assert not registry(folder, clock)["price-totals"].edited_by_human


def test_update_of_an_edited_skill_keeps_the_previous_file(folder, clock):
    """update() over a human-edited file keeps it as <name>.v<version>.md, which is not loaded as a skill."""
    reg = registry(folder, clock)
    reg.register(price_skill())
    path = folder / "price-totals.md"
    edited = path.read_text().replace("then answer with the total.", "then answer in euros.")
    path.write_text(edited)
    reg.refresh()
    reg.update(Skill(**{**price_skill(), "instructions": "New text.", "version": 2}))
    assert (folder / "price-totals.v1.md").read_text() == edited
    fresh = registry(folder, clock)
    assert fresh.names() == ["price-totals"] and fresh["price-totals"].instructions == "New text."


def test_update_of_an_untouched_skill_keeps_no_backup(folder, clock):
    """Only a person's edits are backed up; zagent's own earlier versions are not."""
    reg = registry(folder, clock)
    reg.register(price_skill())
    reg.update(Skill(**{**price_skill(), "instructions": "New text.", "version": 2}))
    assert sorted(p.name for p in folder.glob("*.md")) == ["price-totals.md"]


def test_register_refuses_a_taken_name(folder, clock):
    """Names are unique: a second register() of the same name is a ConfigError."""
    reg = registry(folder, clock)
    reg.register(price_skill())
    with pytest.raises(ConfigError, match="exists already"):
        reg.register(price_skill())


def test_invalid_names_are_refused(folder, clock):
    """A name must be a lower-case slug (it becomes a file name)."""
    with pytest.raises(ConfigError, match="invalid skill name"):
        registry(folder, clock).register(price_skill(name="../Evil Name"))


def test_broken_file_is_skipped_and_the_rest_load(folder, clock):
    """A file without a header is logged and skipped; other skills still load."""
    registry(folder, clock).register(price_skill())
    (folder / "broken.md").write_text("no header here\n")
    assert registry(folder, clock).names() == ["price-totals"]


def test_delete_removes_the_file(folder, clock):
    """delete() removes <name>.md and the skill."""
    reg = registry(folder, clock)
    reg.register(price_skill())
    assert reg.delete("price-totals") and not (folder / "price-totals.md").exists()
    assert reg.names() == []


def test_file_added_by_hand_is_picked_up_on_refresh(folder, clock):
    """refresh() re-reads the folder when a person adds a file."""
    reg = registry(folder, clock)
    reg.register(price_skill())
    (folder / "greet.md").write_text("---\nname: greet\ndescription: Say hello\n---\nSay hello politely.\n")
    assert reg.refresh() and reg["greet"].instructions == "Say hello politely."


def test_import_folder_copies_a_shared_pack(folder, clock, tmp_path):
    """import_folder() copies another folder's skills in, leaving names already present alone."""
    pack = registry(tmp_path / "pack", clock)
    pack.register(price_skill(instructions="pack text"))
    pack.register({"name": "greet", "description": "Say hello", "instructions": "Hello."})
    mine = registry(folder, clock)
    mine.register(price_skill())
    assert mine.import_folder(tmp_path / "pack") == ["greet"]
    assert mine["price-totals"].instructions != "pack text" and (folder / "greet.md").exists()


def test_header_reads_the_same_as_yaml():
    """The header is valid YAML meaning the same values (for people and tools that read it as YAML)."""
    yaml = pytest.importorskip("yaml")
    skill = Skill(name="tricky", description="Use #tags: carefully", when_to_use="yes",
                  instructions="x", tool_sequence=["a"], examples=["- dash", "? q", "1.5 kg", "a: b", "ends:"],
                  provenance=[], created=1.5, content_hash="0e12")
    text = markdown.render(skill)
    header = yaml.safe_load(text.split("---")[1])
    ours = markdown.parse(text)
    assert {k: header[k] for k in header} == {k: ours[k] for k in header}


def test_import_folder_replace_keeps_a_persons_edit_as_backup(folder, clock, tmp_path):
    """import_folder(replace=True) over a human-edited file keeps that file as <name>.v<version>.md."""
    pack = registry(tmp_path / "pack", clock)
    pack.register(price_skill(instructions="pack text"))
    mine = registry(folder, clock)
    mine.register(price_skill())
    path = folder / "price-totals.md"
    edited = path.read_text().replace("then answer with the total.", "then answer in euros.")
    path.write_text(edited)
    mine.refresh()
    assert mine.import_folder(tmp_path / "pack", replace=True) == ["price-totals"]
    assert (folder / "price-totals.v1.md").read_text() == edited
    assert registry(folder, clock)["price-totals"].instructions == "pack text"


def test_register_replace_of_an_untouched_skill_keeps_no_backup(folder, clock):
    """register(replace=True) over a file nobody edited writes no backup (only a person's edits are kept)."""
    reg = registry(folder, clock)
    reg.register(price_skill())
    reg.register(price_skill(instructions="Other text."), replace=True)
    assert sorted(p.name for p in folder.glob("*.md")) == ["price-totals.md"]


def test_update_over_a_broken_file_keeps_it_as_backup(folder, clock):
    """A file a person left unparsable is kept as a backup (version 0) when update() overwrites it."""
    reg = registry(folder, clock)
    reg.register(price_skill())
    (folder / "price-totals.md").write_text("no header, half-edited\n")
    reg.update(Skill(**{**price_skill(), "instructions": "New text.", "version": 2}))
    assert (folder / "price-totals.v0.md").read_text() == "no header, half-edited\n"
    assert registry(folder, clock)["price-totals"].instructions == "New text."
