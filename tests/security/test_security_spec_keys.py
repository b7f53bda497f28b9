"""The spec-key table of docs/security.md covers every key of every spec kind, read from the code.

A key added to a spec Struct, a converter's key list or a provider's options
without a row (data, path, code, destination or size) fails here, and so does a
row naming a key that no longer exists.
"""

import inspect
import pathlib
import re

import attrs
import msgspec
import pytest

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "security.md"
CLASSES = {"data", "path", "code", "destination", "size"}
ROW = re.compile(r"^\| ([^|]+?) \| `([^`]+)` \| ([a-z]+) \|")


def documented():
    """(kind, key) -> class, from the rows between the spec-keys markers."""
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index("<!-- spec-keys"), text.index("<!-- /spec-keys -->")
    rows = {}
    for line in text[start:end].splitlines():
        found = ROW.match(line)
        if found:
            kind, key, cls = found.groups()
            assert (kind, key) not in rows, f"two rows for {kind} {key}"
            rows[(kind, key)] = cls
    return rows


def struct_keys(struct):
    return {f.name for f in msgspec.structs.fields(struct)}


def keyword_options(fn, skip=("kernel", "model", "cls")):
    return {p.name for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in skip}


def code_keys():
    """Every spec key, by kind, from the Structs, validators' key lists and provider signatures."""
    from zagent.plugins.actions import human
    from zagent.plugins.actions.customize import AgentSpec
    from zagent.plugins.actions.action import TEMPLATE_KEYS
    from zagent.plugins.groupchat import selection, termination
    from zagent.plugins.groupchat.spec import GroupChatSpec
    from zagent.plugins.memory.database import Database
    from zagent.plugins.memory.sqlite import SqliteMemory
    from zagent.plugins.offline import _record_factory, _replay
    from zagent.plugins.offline.record import RecordLLM, ReplayLLM
    from zagent.plugins.rails import config as rails
    from zagent.plugins.react.agent import ReActSpec
    from zagent.plugins.skills.skill import Skill
    from zagent.plugins.workflow import graph
    from zagent.providerkit.config import HttpConfig
    from zagent.speckit.sizes import LLM_NUMBERS
    from zagent.providerkit.credentials import CODE_OPTIONS, LLM_CONFIG_KEYS
    from zagent.types import Field

    record = _record_factory(None)
    return {
        "agent": struct_keys(AgentSpec), "react": struct_keys(ReActSpec), "human": set(human._SPEC_KEYS),
        "groupchat": struct_keys(GroupChatSpec), "selection": set(selection.SPEC_KEYS),
        "termination": set(termination.SPEC_KEYS),
        "workflow": struct_keys(graph.WorkFlowGraph), "workflow node": struct_keys(graph.WorkFlowNode),
        "workflow edge": struct_keys(graph.WorkFlowEdge),
        "workflow conditional edge": struct_keys(graph.ConditionalEdge),
        "workflow state": struct_keys(graph.StateField),
        "field": struct_keys(Field), "prompt_template": set(TEMPLATE_KEYS), "skill": struct_keys(Skill),
        "rails": set(rails.KEYS),
        "llm_config": set(LLM_CONFIG_KEYS) | set(CODE_OPTIONS) | struct_keys(HttpConfig) | set(LLM_NUMBERS),
        "long_term_memory": ({"name", "session"} | keyword_options(SqliteMemory.open)
                             | {a.name for a in attrs.fields(Database) if a.init}),
        "record:": keyword_options(RecordLLM.build) | set(record.zagent_path_options),
        "replay:": keyword_options(ReplayLLM.build) | set(_replay.zagent_path_options),
    }


def test_every_spec_key_has_a_row():
    """Each key the code accepts in a spec has a row in docs/security.md's spec-key table."""
    rows = documented()
    missing = sorted(f"{kind} {key}" for kind, keys in code_keys().items() for key in keys
                     if (kind, key) not in rows)
    assert not missing, f"spec keys without a row in docs/security.md: {missing}"


def test_every_row_names_a_key_that_exists():
    """No row of the table names a key (or a spec kind) the code no longer has; wildcard rows aside."""
    keys = code_keys()
    stale = sorted(f"{kind} {key}" for kind, key in documented()
                   if "*" not in key and key not in keys.get(kind, ()))
    assert not stale, f"rows for keys that do not exist: {stale}"


def test_every_row_has_one_of_the_five_classes():
    """Each row's class is data, path, code, destination or size (each with one enforcement point)."""
    wrong = {k: c for k, c in documented().items() if c not in CLASSES}
    assert not wrong


@pytest.mark.parametrize("kind, key", [("react", "trajectory_path"), ("react", "checkpoints"),
                                       ("long_term_memory", "path"), ("record:", "path"), ("replay:", "path")])
def test_keys_that_name_files_are_paths(kind, key):
    """The keys checked by zagent.speckit.paths are classed 'path' (so their row names the one check)."""
    assert documented()[(kind, key)] == "path"


def test_declared_provider_path_options_are_paths():
    """Every option a registered provider declares as a path (zagent_path_options) is classed 'path'."""
    from zagent import Kernel

    k = Kernel(plugins=["zagent.plugins.offline"], entry_points=False)
    rows = documented()
    for name in k.registries["providers"]:
        declared = getattr(k.registries["providers"].get(name), "zagent_path_options", None) or {}
        for option in declared:
            assert rows.get((f"{name}:", option)) == "path", f"{name}: option {option!r} is a path"
    k.close()
