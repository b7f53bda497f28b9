"""Round twelve (wave two), leaks: an agent's spec struct and a provider object serialized the generic ways an app
dumps objects (``msgspec.to_builtins``, ``msgspec.json.encode``, ``repr``, ``attrs.asdict``) show no secret they
hold (key, secret header, URL password or query key, secret request field); the real values still reach the server.
"""

import base64
import json

import pytest

from zagent import Kernel
from tests.servers.loopback import LoopbackServer, Reply
from tests.servers.openai_server import completion

from .conftest import agent_spec

KEY = "sk-r12b-SPECKEY-0123456789abcdef"
HDR = "hdr-r12b-TOKEN-8675309xyz"
PW = "pw-r12b-PASSWORD-2718281828"
QKEY = "qk-r12b-QUERYKEY-1414213562"
BODY = "bk-r12b-BODYKEY-1732050807"
INNER = "sk-r12b-INNERKEY-5772156649"
SECRETS = (KEY, HDR, PW, QKEY, BODY, INNER)
NETWORK = ["openai:gpt-x", "openai-responses:gpt-x", "anthropic:claude-x", "ollama:llama"]


@pytest.fixture
def k():
    kernel = Kernel(["zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama",
                     "zagent.plugins.parsers", "zagent.plugins.actions"], entry_points=False)
    yield kernel
    kernel.close()


def leaked(text):
    return [s for s in SECRETS if s in text]


def _dumps(obj):
    """Each generic dump of ``obj`` an app may write: msgspec's JSON and builtins, and the repr."""
    import msgspec

    return {"json": msgspec.json.encode(obj).decode(), "builtins": repr(msgspec.to_builtins(obj)), "repr": repr(obj)}


def _spec_agent(k, url="http://127.0.0.1:9/v1", **llm_config):
    inner = agent_spec(name="Inner", llm_config={"model": "openai:gpt-x", "api_key": INNER, "base_url": url})
    return k.agent(agent_spec(agents=[inner], llm_config={"model": "openai:gpt-x", "base_url": url, **llm_config}))


@pytest.mark.parametrize("how", ["json", "builtins", "repr"])
def test_an_agents_spec_dumped_shows_no_key_header_or_inline_agents_key(k, how):
    """Attack: ``msgspec.to_builtins(agent.spec)`` / ``msgspec.json.encode`` / ``repr`` of an agent whose
    ``llm_config`` holds its own ``api_key`` and an ``X-Auth-Token`` header, and whose inline tool agent holds
    another key. Defence: the agent keeps a public copy of its spec; public settings stay."""
    agent = _spec_agent(k, api_key=KEY, headers={"X-Auth-Token": HDR, "X-Region": "eu"}, temperature=0.25)
    text = _dumps(agent.spec)[how]
    assert leaked(text) == []
    assert "X-Region" in text and "0.25" in text and "gpt-x" in text


@pytest.mark.parametrize("how", ["json", "builtins", "repr"])
def test_an_agents_spec_dumped_shows_no_url_password_or_query_key(k, how):
    """Attack: the spec's ``base_url`` carries ``user:password@`` and a ``?key=`` query (no ``api_key``), dumped
    the generic ways. Defence: the public copy holds the URL masked; the host and the public query stay."""
    agent = k.agent(agent_spec(llm_config={"model": "openai:gpt-x",
                                           "base_url": f"http://bob:{PW}@127.0.0.1:9/v1?key={QKEY}&region=eu"}))
    text = _dumps(agent.spec)[how]
    assert leaked(text) == []
    assert "127.0.0.1:9" in text and "region=eu" in text


def test_an_agent_built_from_a_spec_still_sends_its_key_header_and_url_credentials(k):
    """Guard: the public copy is only what the agent shows; its model still sends the spec's real key and
    header, and its inline agent's model its own key."""
    with LoopbackServer(lambda r: completion("done")) as server:
        agent = _spec_agent(k, server.url, api_key=KEY, headers={"X-Auth-Token": HDR}, max_retries=0)
        assert agent.execute(inputs={"question": "q"}).output.answer == "done"
    sent = server.requests[0].headers
    assert sent["authorization"] == f"Bearer {KEY}" and sent["x-auth-token"] == HDR


def test_attrs_asdict_of_an_agent_shows_no_key_header_or_query_key(k):
    """Attack: ``attrs.asdict(agent)`` (an app dumping its agents) of an agent whose ``llm_config`` holds an
    ``api_key``, an ``X-Auth-Token`` header and a ``?key=`` in its URL: the agent kept the mapping as given. Defence: once
    its model is made, the agent keeps ``llm_config`` with those as ``Secret`` (``held_settings``)."""
    import attrs

    agent = k.agent(agent_spec(llm_config={"model": "openai:gpt-x", "api_key": KEY, "base_url":
                                           f"http://127.0.0.1:9/v1?key={QKEY}", "headers": {"X-Auth-Token": HDR}}))
    text = repr(attrs.asdict(agent)) + repr(agent.llm_config)
    assert leaked(text) == [] and "127.0.0.1:9" in text
    assert agent.llm_config["api_key"].reveal() == KEY


def test_a_saved_spec_loads_again_and_its_to_dict_is_unchanged(k, tmp_path):
    """Guard: ``save`` -> ``load`` -> ``to_dict`` keeps every public setting (the model, the URL, a
    ``${VAR}`` key reference) and no secret; the copy shown changes nothing saved."""
    from zagent.plugins.actions import CustomizeAgent

    agent = k.agent(agent_spec(llm_config={"model": "openai:gpt-x", "base_url": "http://127.0.0.1:9/v1",
                                           "api_key": "${MY_R12B_KEY}", "headers": {"X-Auth-Token": HDR, "X-Region": "eu"}}))
    path = tmp_path / "a.json"
    agent.save(str(path))
    again = CustomizeAgent.load(str(path), k)
    assert again.to_dict() == agent.to_dict()
    assert agent.to_dict()["llm_config"]["headers"] == {"X-Region": "eu"}
    assert leaked(path.read_text() + json.dumps(again.to_dict())) == []


@pytest.mark.parametrize("model", NETWORK)
@pytest.mark.parametrize("how", ["asdict", "builtins", "repr"])
def test_a_provider_object_dumped_shows_no_query_key_header_or_body_key(k, model, how):
    """Attack: ``attrs.asdict`` / ``msgspec.to_builtins`` / ``repr`` of ``llm.llm`` built with a ``?key=`` in
    ``base_url``, a secret header and an ``extra_body`` ``api_key``, after one call (the URL cache filled).
    Defence: secrets are held as ``Secret`` (or encoded once); public values stay."""
    import attrs
    import msgspec

    llm = k.llm(model, base_url=f"http://127.0.0.1:9/v1?key={QKEY}&region=eu", api_key=KEY, max_retries=0,
                headers={"X-Custom-Token": HDR, "X-Region": "eu"}, extra_body={"api_key": BODY})
    with pytest.raises(Exception):
        llm.complete("hi")
    dump = {"asdict": lambda o: repr(attrs.asdict(o)), "repr": repr,
            "builtins": lambda o: repr(msgspec.to_builtins(o, enc_hook=repr))}[how]
    text = dump(llm.llm)
    assert leaked(text) == []
    if how != "repr":
        assert "X-Region" in text and "region=eu" in text


@pytest.mark.parametrize("model", NETWORK)
def test_a_provider_object_dumped_shows_no_url_password(k, model):
    """Attack: ``attrs.asdict(llm.llm)`` of a model whose ``base_url`` carries ``user:password@`` (Basic auth),
    after one call. Defence: the URL is held masked; the real one only where the client is built."""
    import attrs

    llm = k.llm(model, base_url=f"http://bob:{PW}@127.0.0.1:9/v1", max_retries=0)
    with pytest.raises(Exception):
        llm.complete("hi")
    text = repr(attrs.asdict(llm.llm))
    assert leaked(text) == [] and "127.0.0.1:9" in text


def test_a_provider_with_an_own_client_dumped_shows_no_key(k):
    """Attack: ``attrs.asdict`` of a model given ``client=`` (its headers are built per request and kept) after
    one call. Defence: the kept request headers are held as a ``Secret``."""
    import attrs
    import httpx

    with LoopbackServer(lambda r: completion("hi")) as server:
        llm = k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0,
                    headers={"X-Custom-Token": HDR}, client=httpx.AsyncClient(base_url=server.url))
        assert llm.complete("hi").text == "hi"
        text = repr(attrs.asdict(llm.llm))
    assert leaked(text) == []
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert server.requests[0].headers["x-custom-token"] == HDR


@pytest.mark.parametrize("model", ["openai:gpt-x", "ollama:llama"])
def test_a_provider_still_sends_its_query_key_url_password_header_and_body_key(k, model):
    """Guard: what the object holds hidden is what goes on the wire: the ``?key=`` after each path, the URL's
    Basic credentials, the secret header and the ``extra_body`` ``api_key``."""
    ollama = Reply.json({"model": "llama", "message": {"role": "assistant", "content": "hi"}, "done": True})
    reply = (lambda r: completion("hi")) if model.startswith("openai") else (lambda r: ollama)
    with LoopbackServer(reply) as server:
        host = server.url.split("://", 1)[1]
        for url in (f"{server.url}?key={QKEY}", f"http://bob:{PW}@{host}"):
            llm = k.llm(model, base_url=url, max_retries=0, headers={"X-Custom-Token": HDR},
                        extra_body={"api_key": BODY})
            assert llm.complete("hi").text == "hi"
    first, second = server.requests[0], server.requests[1]
    assert first.path.endswith(f"?key={QKEY}") and first.headers["x-custom-token"] == HDR
    assert BODY in json.dumps(first.json)  # ollama sends it under ``options``
    assert second.headers["authorization"] == "Basic " + base64.b64encode(f"bob:{PW}".encode()).decode()
