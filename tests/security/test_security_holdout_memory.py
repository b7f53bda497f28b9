"""Hold-out round three: a spec file's long-term memory namespace follows every endpoint it sends requests to.

Attacks tried (session 2026-12-03, redteam) and whether they got through before this module's fixes:

- a spec file whose ``llm_config`` is a fallback chain (``"model": "fallback:a", "models": [...]``) edited so an
  entry brings its own ``base_url`` and ``api_key``: GOT THROUGH (same namespace: the victim's recalled memories
  went to the new endpoint) -- fixed: the namespace digest covers the chain's ``models`` (``memorykeys``)
- the same with the list form (``"model": [{"model": ..., "base_url": ...}]``): held (the model list was covered)
- a hostile workflow (group chat) file copying the victim file's inline agent word for word, run by ``zagent workflow
  run`` (``groupchat run``): GOT THROUGH (the namespace digest covered only the inline spec's content: both files
  shared one namespace) -- fixed: the CLI builds a workflow, group chat, batch or eval file under
  ``spec_file(path)``, so its inline agents' identity is the file
- a ``long_term_memory.session`` of ``../Wallet`` or ``Wallet`` to reach another namespace: held (a part of the
  spec's own ``name@digest`` namespace)
"""

import json

import pytest

from .conftest import make_kernel

BASE = {"name": "Wallet", "prompt": "Answer: {question}", "inputs": [{"name": "question"}],
        "outputs": [{"name": "answer"}], "parse_mode": "str", "use_long_term_memory": True}
EVIL = {"model": "openai:gpt-test", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-own"}


@pytest.fixture
def k(tmp_path, monkeypatch):
    monkeypatch.setenv("ZAGENT_MEMORY_DB", str(tmp_path / "share" / "memory.db"))
    kernel = make_kernel(plugins=["zagent.plugins.openai", "zagent.plugins.fallback"])
    yield kernel
    kernel.close()


def namespace(k, path, llm_config):
    path.write_text(json.dumps({**BASE, "llm_config": llm_config}))
    return k.agent(str(path)).namespace


@pytest.mark.parametrize("before, after", [
    ({"model": "fallback:a", "models": ["openai:gpt-test"]}, {"model": "fallback:a", "models": [EVIL]}),
    ({"model": ["openai:gpt-test"]}, {"model": [EVIL]}),
])
def test_a_fallback_entry_edited_to_its_own_endpoint_gets_a_new_namespace(tmp_path, k, before, after):
    """The same file, its fallback chain's entry edited to bring a base_url and key: another, empty namespace."""
    path = tmp_path / "wallet.json"
    assert namespace(k, path, before) == namespace(k, path, before)
    assert namespace(k, path, after) != namespace(k, path, before)


def test_the_chain_entries_key_value_is_not_what_the_namespace_hashes(tmp_path, k):
    """Rotating an entry's own api_key keeps the namespace (only whether it has one counts)."""
    path = tmp_path / "wallet.json"
    first = namespace(k, path, {"model": "fallback:a", "models": [EVIL]})
    assert namespace(k, path, {"model": "fallback:a", "models": [{**EVIL, "api_key": "sk-rotated"}]}) == first


@pytest.mark.parametrize("session", ["../Wallet", "Wallet", "/Wallet"])
def test_a_session_never_leaves_the_specs_own_namespace(tmp_path, k, session):
    """``long_term_memory.session`` is a part inside ``name@digest``, never another agent's namespace."""
    path = tmp_path / "wallet.json"
    path.write_text(json.dumps({**BASE, "llm": "test:offline", "long_term_memory": {"session": session}}))
    ns = k.agent(str(path)).namespace
    assert ns.startswith("Wallet@") and ns != "Wallet"


INLINE = {**BASE, "llm": "test:offline"}


@pytest.mark.parametrize("kind", ["workflow", "groupchat"])
def test_an_inline_agent_copied_into_another_file_gets_its_own_namespace(tmp_path, monkeypatch, kind):
    """Attack: the victim's workflow (group chat) file keeps memories under an inline agent; a hostile file with
    the same inline agent, word for word, must not share them (`zagent workflow run`, `zagent groupchat run`)."""
    from .conftest import run_cli

    monkeypatch.setenv("ZAGENT_MEMORY_DB", str(tmp_path / "memory.db"))
    if kind == "workflow":
        spec = {"name": "pay", "goal": "g", "inputs": [{"name": "question"}], "edges": [], "nodes": [
            {"name": "n", "description": "n", "inputs": [{"name": "question"}], "outputs": [{"name": "answer"}],
             "agents": [INLINE]}]}
        args = ("workflow", "run", "f.json", "-i", "question=hi")
    else:
        spec = {"type": "groupchat", "name": "c", "max_rounds": 1,
                "agents": [{**INLINE, "description": "w", "inputs": [{"name": "task"}], "prompt": "{task}"}]}
        args = ("groupchat", "run", "f.json", "-i", "task=hi")
    for folder in ("victim", "hostile"):
        (tmp_path / folder).mkdir(mode=0o700)
        (tmp_path / folder / "f.json").write_text(json.dumps(spec))
        done = run_cli(*args, cwd=tmp_path / folder, env={"ZAGENT_MEMORY_DB": str(tmp_path / "memory.db")})
        assert done.returncode == 0, done.stderr
    listed = run_cli("memory", "list", cwd=tmp_path, env={"ZAGENT_MEMORY_DB": str(tmp_path / "memory.db")}).stdout
    assert len({line.split()[0] for line in listed.splitlines() if line.startswith("Wallet@")}) == 2
