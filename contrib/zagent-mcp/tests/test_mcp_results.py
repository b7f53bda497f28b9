"""Converting MCP tool results (their wire form) into tool values, by rule."""

import pytest

from zagent_mcp.results import McpToolError, convert


def test_text_blocks_are_joined_with_newlines():
    """Several text blocks become one text, in order."""
    assert convert({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}) == "a\nb"


def test_structured_content_wins_over_text():
    """When structuredContent is present it is the value."""
    result = {"content": [{"type": "text", "text": '{"x": 1}'}], "structuredContent": {"x": 1}}
    assert convert(result) == {"x": 1}


def test_binary_content_becomes_short_references():
    """Images, audio and binary resources are referenced with type, MIME type and size, never their data;
    an embedded text resource is its reference line followed by its text."""
    result = {"content": [
        {"type": "image", "mimeType": "image/png", "data": "AAAA"},
        {"type": "audio", "mimeType": "audio/wav", "data": "AAAAAA=="},
        {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "mimeType": "text/plain"},
        {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/gzip", "blob": "AAAA"}},
        {"type": "resource", "resource": {"uri": "file:///c.md", "text": "hello"}},
    ]}
    assert convert(result).splitlines() == [
        "[image image/png 3 bytes]",
        "[audio audio/wav 4 bytes]",
        "[resource file:///a.txt text/plain a.txt]",
        "[resource file:///b.bin application/gzip 3 bytes]",
        "[resource file:///c.md]",
        "hello",
    ]


def test_long_text_resource_is_cut_saying_how_much():
    """An embedded text resource over MAX_RESOURCE_TEXT characters is cut, and the cut is stated."""
    from zagent_mcp.results import MAX_RESOURCE_TEXT

    text = "x" * (MAX_RESOURCE_TEXT + 10)
    out = convert({"content": [{"type": "resource", "resource": {"uri": "file:///big", "text": text}}]})
    assert out.endswith("[... 10 more characters]") and len(out) < MAX_RESOURCE_TEXT + 100


def test_is_error_raises_with_the_servers_text():
    """An isError result raises McpToolError carrying the server's message."""
    with pytest.raises(McpToolError, match="quota exceeded"):
        convert({"content": [{"type": "text", "text": "quota exceeded"}], "isError": True})


def test_is_error_without_text_still_says_something():
    """An isError result without content raises a message saying so."""
    with pytest.raises(McpToolError, match="without a message"):
        convert({"content": [], "isError": True})


def test_structured_content_under_the_bound_in_characters_is_kept_whole():
    """Structured content of 150,000 non-ASCII characters (450,000 bytes of UTF-8) is under the 200,000-character
    bound: it comes back as the structure, not cut into text."""
    structured = {"text": "漢" * 150_000}
    assert convert({"content": [], "structuredContent": structured}) == structured


def test_structured_content_over_the_bound_in_characters_is_cut_saying_so():
    """Structured content over 200,000 characters is cut to text, the cut stated."""
    out = convert({"content": [], "structuredContent": {"text": "漢" * 250_000}})
    assert isinstance(out, str) and len(out) <= 200_000 and "more characters of the result cut" in out
