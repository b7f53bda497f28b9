"""Image and file parts on each provider's wire, checked against the request bodies the APIs document."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from zagent import Message
from zagent.types import Part

from tests.servers.anthropic_server import AnthropicServer
from tests.servers.ollama_server import OllamaServer
from tests.servers.openai_server import OpenAIServer
from tests.servers.responses_server import ResponsesServer

FIXTURES = json.loads((Path(__file__).parent / "fixtures" / "content_parts.json").read_text())
KEY = "sk-test"


def _bytes(case: str) -> bytes:
    """The inline bytes of a documented payload (its first base64 data)."""
    text = json.dumps(FIXTURES[case])
    for marker in ('base64,', '"data": "', '"images": ["'):
        if marker in text:
            return base64.b64decode(text.split(marker, 1)[1].split('"', 1)[0])
    raise AssertionError(case)


def _first_text(case: str) -> str:
    body = FIXTURES[case]
    message = (body.get("messages") or body.get("input"))[0]
    if isinstance(message["content"], str):
        return message["content"]
    return next(p["text"] for p in message["content"] if p["type"] in ("text", "input_text"))


URL_OF = {"openai_chat_image_url": FIXTURES["openai_chat_image_url"]["messages"][0]["content"][1]["image_url"]["url"],
          "anthropic_image_url": FIXTURES["anthropic_image_url"]["messages"][0]["content"][0]["source"]["url"]}
URL_OF["responses_image_url"] = URL_OF["openai_chat_image_url"]


def _message(case: str) -> Message:
    """The message an app writes for the documented case."""
    text = _first_text(case)
    if case.endswith("_url"):
        return Message.user(text, image=URL_OF[case])
    if case.endswith("_pdf") and not case.startswith("anthropic"):  # the docs put the file before the text
        return Message(role="user", parts=[Part.file(_bytes(case), name="draconomicon.pdf"),
                                           Part(type="text", text=text)])
    if case.endswith("_pdf"):
        return Message.user(text, file=_bytes(case))
    return Message.user(text, image=_bytes(case))


SERVERS = {"openai_chat": (OpenAIServer, "openai:{}", "messages"), "responses": (ResponsesServer, "openai-responses:{}", "input"),
           "anthropic": (AnthropicServer, "anthropic:{}", "messages"), "ollama": (OllamaServer, "ollama:{}", "messages")}


def _provider(case: str):
    return next(v for k, v in SERVERS.items() if case.startswith(k))


@pytest.fixture
def k(make_kernel):
    """A fresh kernel with the network provider plugins, closed after the test."""
    return make_kernel("zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama", strict=False)


def _send(k, case: str, message: Message):
    server_type, spec, field = _provider(case)
    key = "sk-ant-test" if server_type is AnthropicServer else KEY
    with (server_type() if server_type is OllamaServer else server_type(key=key)) as server:
        options = {} if server_type is OllamaServer else {"api_key": key}
        llm = k.llm(spec.format(FIXTURES[case]["model"]), base_url=server.url, retry_backoff=0.001, **options)
        reply = llm.complete([message], max_tokens=1024) if server_type is AnthropicServer else llm.complete([message])
        return server.requests[-1].json[field], reply.text


CASES = [c for c in FIXTURES if not c.startswith("_")]


@pytest.mark.parametrize("case", CASES)
def test_encoded_parts_match_the_documented_request_body(k, case):
    """The messages (or input) zagent sends for an image/PDF message equal the API documentation's request body."""
    sent, _ = _send(k, case, _message(case))
    _, _, field = _provider(case)
    assert sent == FIXTURES[case][field]


@pytest.mark.parametrize("case", ["openai_chat_image_base64", "responses_pdf", "anthropic_pdf", "ollama_image"])
def test_the_server_decodes_each_part(k, case):
    """The loopback server decodes the part's base64 to the bytes the app gave (its echo names their size)."""
    _, text = _send(k, case, _message(case))
    assert f"{len(_bytes(case))} bytes" in text


def test_a_text_only_message_is_encoded_as_before(k):
    """A message without parts goes out as a plain string content, with no parts field anywhere."""
    with OpenAIServer(key=KEY) as server:
        k.llm("openai:gpt-4o-mini", base_url=server.url, api_key=KEY).complete([Message.user("hi")])
        assert server.requests[-1].json["messages"] == [{"role": "user", "content": "hi"}]
