"""Hold-out round three: a spec's own key in reprs and saved specs.

Attacks tried (session 2026-12-03, redteam) and whether they got through before this module's fixes:

- ``repr(agent.spec)`` of a declared agent, a ReAct agent, a group chat spec and a workflow graph (and node) whose
  ``llm_config`` (or an inline agent's) holds an ``api_key``: GOT THROUGH (msgspec's repr showed the key, e.g. in a
  logged spec or a traceback's locals) -- fixed: spec Structs' repr is ``zagent.speckit.specs.spec_repr``
- a secret header named with a number or version (``X-Api-Key-2``, ``X-Custom-Token-2``, ``api_key_v2``):
  GOT THROUGH (not secret-named: kept in saved specs, not masked when echoed) -- fixed: ``looks_secret``
  ignores a trailing number or version
- the CLI's ``workflow show``/``workflow run``/``groupchat run`` of files holding an inline agent's key: held
"""

import pytest

from zagent.agentkit.secrets import looks_secret, public_data

from .conftest import agent_spec, make_kernel

KEY = "sk-SPECSECRET-1234567890"
LLM = {"model": "test:offline", "api_key": KEY}


def test_a_declared_agents_spec_repr_hides_its_key():
    """``repr(agent.spec)`` of a declared agent with its own api_key shows no key."""
    k = make_kernel()
    agent = k.agent(agent_spec(llm_config=LLM))
    assert KEY not in repr(agent.spec) and "test:offline" in repr(agent.spec)
    k.close()


def test_a_react_agents_spec_repr_hides_its_key_and_its_inline_agents():
    """A ReAct spec with a key of its own and an inline sub-agent's key: neither shows in the repr."""
    from zagent.plugins.react.agent import ReActSpec
    import msgspec

    spec = msgspec.convert({"name": "R", "llm_config": LLM, "agents": [agent_spec(name="Sub", llm_config=LLM)]},
                           ReActSpec)
    assert KEY not in repr(spec) and "Sub" in repr(spec)


def test_group_chat_and_workflow_reprs_hide_inline_agents_keys():
    """A group chat spec and a workflow graph (and its node) holding inline agents with keys: no key in reprs."""
    import msgspec

    from zagent.plugins.groupchat.spec import GroupChatSpec
    from zagent.plugins.workflow import WorkFlowGraph

    chat = msgspec.convert({"agents": [agent_spec(name="A", llm_config=LLM)]}, GroupChatSpec)
    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "question"}], "edges": [],
                                     "nodes": [{"name": "a", "description": "a", "inputs": [{"name": "question"}],
                                                "outputs": [{"name": "answer"}],
                                                "agents": [agent_spec(name="A", llm_config=LLM)]}]})
    for shown in (repr(chat), repr(graph.nodes[0])):
        assert KEY not in shown and "'A'" in shown
    assert KEY not in repr(graph)


@pytest.mark.parametrize("name", ["X-Api-Key-2", "X-Custom-Token-2", "api_key_v2", "password2"])
def test_a_numbered_secret_name_is_still_a_secret(name):
    """A trailing number or version does not hide what a setting is: dropped from public data."""
    assert looks_secret(name)
    assert public_data({"headers": {name: "s3cret-value-123"}}) == {"headers": {}}


@pytest.mark.parametrize("name", ["max_tokens", "max_tokens_2", "top_k", "api_key_env", "v2", "token_limit"])
def test_ordinary_settings_stay(name):
    """Counts and names of variables are not secrets (unchanged)."""
    assert not looks_secret(name)


def test_a_numbered_secret_header_echoed_in_an_error_is_masked():
    """``X-Custom-Token-2`` sent to a server that echoes it in its error: the value is masked."""
    from zagent.providerkit.masking import header_secrets

    assert "tok-SECRET-abcdef123" in header_secrets({"X-Custom-Token-2": "tok-SECRET-abcdef123"})
