"""Attack: a lying MCP server (``servers/lying_mcp.py``, a real stdio server on the official SDK).

Its name, version, tool names and descriptions carry terminal escapes and bidi overrides; it lists 10,000
tools, a 10 MB description or a 2 MB schema (each sent to the model with every call); it answers 2 MB; it
forges a reply for a request never made; it never answers. Each is bounded, escaped or a clear error, and
the honest ``echo`` tool keeps working.
"""

import logging
import sys
from pathlib import Path

import pytest

pytest.importorskip("zagent_mcp")

from zagent import Kernel  # noqa: E402

SERVER = str(Path(__file__).resolve().parent / "servers" / "lying_mcp.py")
RAW = ("\x1b", "\x07", "\u202e")


def lying(mode, *plugins, **entry):
    """A kernel with the lying server in ``mode`` as MCP server ``evil``, connected."""
    from zagent_mcp.plugin import runtime_of

    server = {"command": sys.executable, "args": [SERVER, mode], "connect_timeout": 120, "timeout": 120, **entry}
    k = Kernel(plugins=["zagent_mcp.plugin", *plugins], entry_points=False, config={"mcp": {"mcpServers": {"evil": server}}})
    runtime_of(k).wait(None)
    return k


def evil_tools(k):
    return {t.name: t for t in k.tools() if t.name.startswith("evil.")}


def echo_works(k):
    result = k.run_tool({"name": "evil.echo", "arguments": {"text": "hi"}})
    return result.state == "success" and result.content == "hi"


def test_escapes_in_names_descriptions_and_server_info_are_escaped():
    """Tool names are sanitized, and descriptions and the server's name/version hold no raw control characters."""
    from zagent_mcp.plugin import runtime_of

    k = lying("escapes")
    tools = evil_tools(k)
    [status] = runtime_of(k).status()
    texts = [*tools, *(t.description for t in tools.values()), status["server"]]
    assert len(tools) == 3 and not [t for t in texts if any(c in t for c in RAW)]
    assert "\\x1b[8m" in tools["evil.plain"].description and "\\x1b" in status["server"]
    assert echo_works(k)
    k.close()


def test_a_server_listing_10000_tools_gets_1000(caplog):
    """10,000 listed tools: the first 1,000 are registered, and the log says why the rest are not."""
    from zagent_mcp.connection import MAX_TOOLS

    with caplog.at_level(logging.WARNING, logger="zagent.mcp"):
        k = lying("many")
    assert len(evil_tools(k)) == MAX_TOOLS == 1000
    assert "lists more than 1000 tools" in caplog.text
    assert echo_works(k)
    k.close()


def test_a_10mb_description_is_cut_and_a_2mb_schema_is_refused():
    """A 10 MB description reaches the model as at most 8 KB (saying it was cut); a 2 MB schema skips the tool."""
    from zagent_mcp.plugin import runtime_of

    k = lying("huge")
    tools = evil_tools(k)
    assert len(tools["evil.wordy"].description) < 9000 and "more characters cut" in tools["evil.wordy"].description
    assert "evil.schema" not in tools
    assert any("input schema is" in s for s in runtime_of(k).skipped)
    assert echo_works(k)
    k.close()


@pytest.mark.parametrize("tool", ["evil.flood", "evil.flood_structured"])
def test_a_2mb_result_reaches_the_model_cut(tool):
    """A 2 MB text or structured result (ten times the bound) is cut to 200,000 characters, saying how much."""
    k = lying("flood")
    result = k.run_tool({"name": tool, "arguments": {}})
    assert result.state == "success"
    assert len(result.content) < 200_100 and "more characters of the result cut" in result.content
    k.close()


def test_a_result_for_a_call_never_made_is_dropped():
    """A forged JSON-RPC reply (an id never sent) changes no result; the session keeps working."""
    k = lying("forge")
    result = k.run_tool({"name": "evil.forge", "arguments": {}})
    assert (result.state, result.content) == ("success", "real")
    assert echo_works(k)
    k.close()


def test_a_call_never_answered_times_out_with_a_clear_error():
    """``hang()`` never answers: the call ends at the server's ``timeout`` with an error naming it."""
    k = lying("silent", timeout=2)
    result = k.run_tool({"name": "evil.hang", "arguments": {}})
    assert result.state == "timeout" and "did not finish within 2 s" in result.content
    k.close()


def test_a_server_never_answering_initialize_fails_at_its_connect_timeout():
    """A server that never answers ``initialize`` is ``failed`` after ``connect_timeout``, saying so."""
    from zagent_mcp.plugin import runtime_of

    k = lying("mute", connect_timeout=2)
    [status] = runtime_of(k).status()
    assert status["state"] == "failed" and "did not answer within 2 s" in status["error"]
    assert evil_tools(k) == {}
    k.close()


def test_a_tool_colliding_with_a_kernel_tool_leaves_the_kernel_tool():
    """A server offering ``echo`` where the app already has ``evil.echo``: the app's tool stays and runs."""
    from zagent_mcp.plugin import runtime_of

    class AppTools:
        def zagent_register_tools(self, register, kernel):
            def echo(text: str) -> str:
                """The app's own echo."""
                return "app:" + text
            register(echo, name="evil.echo")

    k = lying("collide", AppTools())
    assert k.run_tool({"name": "evil.echo", "arguments": {"text": "x"}}).content == "app:x"
    assert any("evil.echo" in s for s in runtime_of(k).skipped)
    k.close()


def test_a_server_listing_a_name_twice_shows_it_once():
    """``echo`` listed twice: one tool is registered and ``status`` (``zagent mcp list``) lists it once."""
    from zagent_mcp.plugin import runtime_of

    k = lying("collide")
    [status] = runtime_of(k).status()
    assert status["tools"].count("evil.echo") == 1
    assert list(evil_tools(k)).count("evil.echo") == 1 and echo_works(k)
    k.close()
