"""What a model takes: a part it cannot take is a clear error before any request; inline bytes are bounded."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st
from zagent import Message
from zagent.errors import ConfigError, ProviderConfigError
from zagent.agentkit.media import read_part
from zagent.types import placeholder
from zagent.providerkit import data_url
from zagent.types import Part

from tests.servers.anthropic_server import AnthropicServer
from tests.servers.ollama_server import OllamaServer
from tests.servers.openai_server import OpenAIServer

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
PDF = b"%PDF-1.4\n%%EOF\n"


@pytest.fixture
def k(make_kernel):
    """A fresh kernel with the network provider plugins, closed after the test."""
    return make_kernel("zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama", strict=False)


def test_a_text_only_profile_refuses_an_image_before_any_request(k):
    """profile input_media=() makes an image part a ProviderConfigError naming the part, the model and the fix; nothing is sent."""
    with OpenAIServer(key="sk-test") as server:
        llm = k.llm("openai:gpt-3.5-turbo", base_url=server.url, api_key="sk-test", profile={"input_media": ()})
        with pytest.raises(ProviderConfigError) as info:
            llm.complete([Message.user("what is this?", image=PNG)])
        assert server.requests == []
    text = str(info.value)
    assert "image part" in text and "openai:gpt-3.5-turbo" in text and "input_media" in text


def test_ollama_refuses_a_file_part(k):
    """Ollama takes images only: a PDF part is refused before the request, naming what it takes."""
    with OllamaServer() as server:
        with pytest.raises(ProviderConfigError, match="cannot take file parts.*takes: image"):
            k.llm("ollama:llama3.2", base_url=server.url).complete([Message.user("sum up", file=PDF)])
        assert server.requests == []


def test_ollama_refuses_an_image_url(k):
    """Ollama fetches no URLs: an image given by https URL is a clear error telling to pass the bytes."""
    with OllamaServer() as server, pytest.raises(ProviderConfigError, match="bytes only"):
        k.llm("ollama:llava", base_url=server.url).complete([Message.user("?", image="https://example.com/a.png")])


def test_anthropic_takes_pdfs_but_not_other_files(k):
    """Anthropic documents are PDFs: a text/csv file part is refused before the request."""
    with AnthropicServer(key="sk-ant-test") as server:
        llm = k.llm("anthropic:claude-sonnet-4-5", base_url=server.url, api_key="sk-ant-test")
        with pytest.raises(ProviderConfigError, match="file part"):
            llm.complete([Message.user("?", file=Part.file(b"a,b\n", media_type="text/csv"))])
        assert server.requests == []


def test_inline_bytes_over_the_limit_are_refused():
    """Inline bytes over max_bytes are a ConfigError saying the size, the limit and what to do."""
    with pytest.raises(ConfigError, match="over the 16-byte limit.*max_bytes"):
        Part.image(PNG, max_bytes=16)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "/etc/passwd", "ftp://x/a.png", "data:text/html,x"])
def test_an_image_url_must_be_http_or_a_data_image(url):
    """An image source that is a path or another scheme is refused, never read or followed."""
    with pytest.raises(ConfigError, match="not an http"):
        Part.image(url)


def test_unknown_bytes_need_a_media_type():
    """Bytes whose magic number is not an image need media_type=, and the error says so."""
    with pytest.raises(ConfigError, match="media_type="):
        Part.image(b"not an image")


def test_read_part_bounds_the_file(tmp_path):
    """read_part reads a PNG as an image part and refuses a file over the limit."""
    (tmp_path / "a.png").write_bytes(PNG)
    assert read_part(tmp_path / "a.png").media_type == "image/png"
    with pytest.raises(ConfigError, match="limit"):
        read_part(tmp_path / "a.png", max_bytes=4)


def test_read_part_refuses_a_fifo_without_hanging(tmp_path):
    """read_part on a FIFO is a ConfigError at once (opened without blocking), not a read that waits forever."""
    import os

    os.mkfifo(tmp_path / "pipe.png")
    with pytest.raises(ConfigError, match="pipe.png"):
        read_part(tmp_path / "pipe.png")


@given(st.binary(max_size=512))
def test_data_urls_carry_the_bytes_exactly(data):
    """A part's data URL decodes back to its bytes, whatever they are."""
    url = data_url(Part.image(data, media_type="image/png"))
    assert base64.b64decode(url.split(",", 1)[1]) == data


@given(st.binary(max_size=256))
def test_parts_round_trip_through_json(data):
    """A message with parts encodes its bytes as base64 JSON and decodes back equal (checkpoints rely on it)."""
    import msgspec

    m = Message.user("q", image=Part.image(data, media_type="image/png"), file=PDF)
    assert msgspec.json.decode(msgspec.json.encode(m), type=Message) == m


def test_placeholder_and_repr_hide_the_bytes():
    """repr and placeholder show the media type, size and digest, never the bytes."""
    secret = b"\x89PNG\r\n\x1a\nSECRETPIXELS"
    part = Part.image(secret)
    assert "SECRETPIXELS" not in repr(part) and "SECRETPIXELS" not in repr(Message.user("x", image=part))
    assert placeholder(part).startswith(f"<image/png {len(secret)} bytes sha256:")
