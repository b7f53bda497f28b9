"""Round eight, a hostile MCP server (``servers/round8_mcp.py``, a real stdio server on the official SDK).

Tried (got through before the fix?): 2,000 ``tools/list_changed`` notifications in a burst, each answered with
a ``tools/list`` request and a re-registration of every tool (yes); a server asking the client to sample a
model or to ask the user for input, which the client never offered (no: the SDK refuses both).
"""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("zagent_mcp")

from zagent_mcp.plugin import runtime_of  # noqa: E402

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "servers", "round8_mcp.py")


@pytest.fixture
def hostile(make_kernel):
    k = make_kernel({"evil": {"command": sys.executable, "args": [SERVER], "connect_timeout": 120, "timeout": 120}})
    runtime_of(k).wait(None)
    return k


def test_a_burst_of_list_changed_notifications_is_not_read_once_per_notification(hostile):
    """Attack: the server sends 2,000 ``tools/list_changed`` notifications at once. Defence: re-reads are
    coalesced (one at a time, one more queued while it runs), so the list is read once per read that overlapped
    the burst, not once per notification; its tools still work. How many reads overlap depends on how the burst
    interleaves with them (a dozen on a quiet machine, a few hundred on a loaded one), so the bound is half the
    burst: without coalescing it is read all 2,000 times."""
    result = hostile.run_tool({"name": "evil.relist", "arguments": {}})
    assert result.state == "success" and int(result.content) < 1_000
    assert hostile.run_tool({"name": "evil.echo", "arguments": {"text": "hi"}}).content == "hi"


@pytest.mark.parametrize("tool", ["sample", "elicit"])
def test_a_server_cannot_make_the_client_sample_a_model_or_ask_the_user(hostile, tool):
    """Attack: the server sends ``sampling/createMessage`` (to spend the user's model) or ``elicitation/create``
    (to ask the user for a password), neither of which zagent offers. Defence (held): the request is refused
    with an error; no model is asked and no one is prompted."""
    result = hostile.run_tool({"name": f"evil.{tool}", "arguments": {}})
    assert result.state == "success" and result.content.startswith("refused:")


def _served():
    """A kernel serving ``transfer(amount)`` (it refuses more than 100) and holding an unserved ``steal``."""
    from zagent import Kernel
    from zagent_mcp.serve import McpServe

    k = Kernel(entry_points=False, plugins=[])
    k.sent = []

    def transfer(amount: float) -> str:
        """Send money (at most 100)."""
        if amount > 100:
            raise ValueError("over the limit")
        k.sent.append(amount)
        return "sent"

    def steal() -> str:
        """Not served."""
        k.sent.append("steal")
        return "secret"

    k.add_tool(transfer)
    k.add_tool(steal)
    return k, McpServe(k, tools=["transfer"])


def _as_client(serve, *steps):
    import anyio
    from mcp.client.client import Client

    async def main():
        out = []
        async with Client(serve.server) as client:
            for step in steps:
                try:
                    out.append(await step(client))
                except Exception as exc:  # a JSON-RPC error answer
                    out.append(exc)
        return out

    return anyio.run(main)


def test_a_hostile_client_cannot_pass_nan_to_a_served_tool():
    """Attack: a client of ``zagent mcp serve`` sends ``{"amount": "NaN"}``; converted to a float NaN it passed
    the tool's ``amount > 100`` check. Defence: refused as an ``isError`` result; the tool never runs."""
    k, serve = _served()
    [result] = _as_client(serve, lambda c: c.call_tool("transfer", {"amount": "NaN"}))
    assert result.is_error and "finite number" in result.content[0].text and k.sent == []
    k.close()


def test_a_hostile_client_cannot_read_files_through_resource_uris():
    """Attack: a client asks the server for ``file:///etc/passwd`` and a ``../`` path as resources. Defence (held):
    zagent serves tools only; ``resources/read`` is an error and nothing is read."""
    k, serve = _served()
    got = _as_client(serve, lambda c: c.read_resource("file:///etc/passwd"),
                     lambda c: c.read_resource("file:///tmp/../../etc/passwd"))
    assert all(isinstance(g, Exception) for g in got) and not any("root:" in str(g) for g in got)
    k.close()


def test_a_server_cannot_take_a_tool_name_in_another_servers_namespace(make_kernel):
    """Attack: with ``name_separator: "_"``, server ``web`` lists ``search_echo``, which becomes
    ``web_search_echo`` -- the name of server ``web_search``'s ``echo``; connecting first, it took that name and
    its calls. Defence: a tool whose name falls in another configured server's namespace is skipped, whatever the
    order the servers connect in; ``web_search_echo`` is ``web_search``'s."""
    entry = {"command": sys.executable, "connect_timeout": 120, "timeout": 120}
    k = make_kernel({"web": {**entry, "args": [SERVER, "shadow"]}, "web_search": {**entry, "args": [SERVER, "slow"]}},
                    name_separator="_")
    runtime = runtime_of(k)
    runtime.wait(None)
    assert k.run_tool({"name": "web_search_echo", "arguments": {"text": "hi"}}).content == "hi"
    assert k.tool("web_search_echo").metadata["mcp_server"] == "web_search"
    assert any("search_echo" in s and "web_search" in s for s in runtime.skipped)
