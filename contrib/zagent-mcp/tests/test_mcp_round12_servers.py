"""Round twelve, a hostile MCP server (``servers/round12_raw.py``, raw JSON-RPC on stdio, no SDK) against zagent's
client, new variants: a ``tools/list`` whose pagination never ends or goes round in a cycle, 60 fat tool schemas,
a flood of progress notifications and megabyte log messages during a call, results naming ``file://`` paths with
a 12 MB image, and structured content nested past every parser or made of millions of empty objects.

9 attacks; 7 got through before this round's fixes (each docstring says "Got through"), all fixed; the flood and
the file links held.
"""

from __future__ import annotations

import logging
import pathlib
import sys

import pytest

pytest.importorskip("zagent_mcp")

from zagent.types import ToolCall  # noqa: E402
from zagent_mcp.plugin import runtime_of  # noqa: E402

RAW = str(pathlib.Path(__file__).resolve().parent / "servers" / "round12_raw.py")


def raw(mode, n=1000, **extra):
    return {"raw": {"command": sys.executable, "args": [RAW, mode, str(n)], **extra}}


def _names(k):
    return sorted(e.name for e in k.entries("tools") if e.name.startswith("raw."))


def test_a_tool_list_whose_pages_never_end_is_cut_and_said(make_kernel, caplog):
    """Got through: ``tools/list`` answering every page with one tool and a new ``nextCursor``. zagent stopped after
    100 pages without a word: the user never learnt the list was cut. Defence: still at most 100 pages read, and
    a warning names the server and says its list did not end."""
    caplog.set_level(logging.WARNING, logger="zagent.mcp")
    k = make_kernel(raw("pages"))
    runtime_of(k).wait(None)
    echo = k.run_tool(ToolCall(id="c1", name="raw.echo", arguments={"text": "hi"}))
    lists = int(echo.content.split()[0].split("=")[1])
    assert lists <= 100 and len(_names(k)) <= 100
    assert "raw" in caplog.text and "did not end" in caplog.text, caplog.text


def test_a_tool_list_whose_cursor_goes_round_stops_at_the_first_repeat(make_kernel, caplog):
    """Got through: pages whose ``nextCursor`` goes ``a``, ``b``, ``a``... (each page listing ``echo`` again) were
    read 100 times. Defence: a cursor seen before ends the listing at once, with a warning; ``echo`` is offered
    once."""
    caplog.set_level(logging.WARNING, logger="zagent.mcp")
    k = make_kernel(raw("cycle"))
    runtime_of(k).wait(None)
    echo = k.run_tool(ToolCall(id="c1", name="raw.echo", arguments={"text": "hi"}))
    lists = int(echo.content.split()[0].split("=")[1])
    assert lists <= 3, lists
    assert _names(k) == ["raw.echo"]
    assert "cursor" in caplog.text, caplog.text


def test_a_flood_of_progress_and_megabyte_log_messages_during_a_call_changes_nothing(make_kernel, caplog):
    """Attack: while a call runs, 20,000 progress notifications for it and twenty 1 MB log messages. Defence: the
    call gets its own answer; no log message reaches the app's log whole."""
    caplog.set_level(logging.DEBUG)
    k = make_kernel(raw("flood", 20_000))
    runtime_of(k).wait(None)
    result = k.run_tool(ToolCall(id="c1", name="raw.echo", arguments={"text": "done"}))
    assert result.state == "success" and result.content.endswith("done"), result.error
    assert len(caplog.text) < 2**20, len(caplog.text)


def test_file_links_and_a_twelve_megabyte_image_reach_the_model_as_short_references(make_kernel):
    """Attack: a result linking ``file:///etc/passwd``, embedding ``file:///etc/shadow`` as a blob and carrying a
    12 MB image. Defence: the model reads short references; no file is read, no image bytes are passed on."""
    k = make_kernel(raw("links"))
    runtime_of(k).wait(None)
    result = k.run_tool(ToolCall(id="c1", name="raw.links", arguments={}))
    assert result.state == "success", result.error
    text = str(result.content)
    assert "file:///etc/passwd" in text and "root:" not in text
    assert len(text) < 1000, len(text)


@pytest.mark.parametrize("depth", [400, 5000, 200_000])
def test_structured_content_nested_past_every_parser_is_an_error_not_a_crash(make_kernel, depth):
    """Got through: a result whose ``structuredContent`` is nested 400, 5,000 or 200,000 levels deep. The SDK could
    not parse it, handed the parse error to the message handler (logged as junk) and the call waited for its whole
    ``timeout`` (60 s) while the model waited too. Defence: zagent's stdio reader answers the call the unreadable
    reply names with a JSON-RPC error, as the SDK's HTTP client does: the call fails at once saying why, and the
    server keeps answering."""
    k = make_kernel(raw("deep", depth))
    runtime_of(k).wait(None)
    result = k.run_tool(ToolCall(id="c1", name="raw.deep", arguments={}))
    assert result.state == "error", result
    assert "could not be read" in result.content and len(result.content) < 1000, result.content
    after = k.run_tool(ToolCall(id="c2", name="raw.echo", arguments={"text": "up"}))
    assert str(after.content).endswith("up"), after


def test_many_fat_tool_schemas_are_not_all_offered_to_the_model(make_kernel, caplog):
    """Got through: a server listing 60 tools whose input schemas are 200 KB each (each under the 256 KiB a schema
    may have; 12 MB in one message, under ``max_message_bytes``): all were offered, so every model call sent 12 MB
    of schemas (three million tokens). Defence: one server's descriptions and schemas together are at most
    ``MAX_OFFERED_BYTES`` (4 MiB); the tools after are skipped with a warning saying how to choose the tools."""
    import msgspec

    from zagent_mcp.runtime import MAX_OFFERED_BYTES

    caplog.set_level(logging.WARNING, logger="zagent.mcp")
    k = make_kernel(raw("fat", 60))
    runtime_of(k).wait(None)
    names = _names(k)
    tools = [k.find("tools", n) for n in names]
    size = sum(len(t.description) + len(msgspec.json.encode(t.parameters)) for t in tools)
    assert "raw.echo" in names and 1 < len(names) < 61, names
    assert size <= MAX_OFFERED_BYTES, size
    assert "'tools' entry" in caplog.text, caplog.text


def test_structured_content_of_millions_of_empty_objects_is_refused_not_read(make_kernel):
    """Got through: a result whose ``structuredContent`` holds 3,000,000 empty objects (9 MB, under
    ``max_message_bytes``) took some 790 MiB once the SDK read it (16 MiB of them, some 1.4 GB). Defence: a message
    still holding over ``MAX_CONTAINERS`` objects and arrays after its lists are cut is replaced, before the SDK
    reads it, by an error for its call saying so; the server keeps answering."""
    import tracemalloc

    k = make_kernel(raw("bomb", 3_000_000))
    runtime_of(k).wait(None)
    tracemalloc.start()
    try:
        result = k.run_tool(ToolCall(id="c1", name="raw.deep", arguments={}))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.state == "error" and "JSON objects and arrays" in result.content, result
    assert peak < 150 * 2**20, f"{peak / 2**20:.0f} MiB"
    assert str(k.run_tool(ToolCall(id="c2", name="raw.echo", arguments={"text": "up"})).content).endswith("up")
