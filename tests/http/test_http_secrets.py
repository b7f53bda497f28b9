"""Secrets in HTTP errors and records: whole values masked (keys and secret-looking headers, even echoed),
never fragments of words (a dummy key such as ``x`` leaves messages and records intact)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.servers import hostile
from tests.servers.hostile import HostileServer
from tests.servers.openai_server import OpenAIServer
from zagent import BadRequestError, ProviderError
from zagent.agentkit.secrets import MIN_MASK_LENGTH
from zagent.providerkit.masking import header_secrets, mask


def _error_body(message: str) -> bytes:
    return json.dumps({"error": {"message": message}}).encode()


def test_a_short_dummy_key_does_not_mangle_server_errors(kernel):
    """With OPENAI_API_KEY=x (a local server's dummy key) the server's text comes through unmasked."""
    text = "expected text: max_tokens exceeds the context"
    with HostileServer(hostile.reply(400, _error_body(text))) as server:
        with pytest.raises(BadRequestError) as info:
            kernel.llm("openai:m", base_url=server.url, api_key="x").complete("hi")
    assert text in str(info.value) and "***" not in str(info.value)


def test_a_real_key_echoed_by_the_server_is_masked(kernel):
    """A real-looking key echoed in the server's message is replaced by ***."""
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
    with HostileServer(hostile.reply(401, _error_body(f"Incorrect API key provided: {key}."))) as server:
        with pytest.raises(ProviderError) as info:
            kernel.llm("openai:m", base_url=server.url, api_key=key).complete("hi")
    assert key not in str(info.value) and key not in info.value.body and "***" in str(info.value)


@pytest.mark.parametrize("header", ["X-Api-Key", "Authorization", "X-Auth-Token", "Cookie"])
def test_secret_headers_echoed_by_a_server_are_masked_in_errors(kernel, header, monkeypatch):
    """A custom header whose name says key/token/auth/cookie is masked when a server echoes the request."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    value = "hdr-secret-value-4242"
    sent = f"Bearer {value}" if header == "Authorization" else f"session={value}" if header == "Cookie" else value
    key = {} if header == "Authorization" else {"api_key": "x"}
    with HostileServer(hostile.echo_headers(400)) as server:
        llm = kernel.llm("openai:m", base_url=server.url, headers={header: sent}, **key)
        with pytest.raises(BadRequestError) as info:
            llm.complete("hi")
        assert value in server.requests[0].headers[header.lower()]
    assert value not in str(info.value) and value not in info.value.body


def test_secret_headers_echoed_are_masked_in_records(kernel, tmp_path):
    """record: JSONL never holds a secret header value, even from an error that echoes the headers."""
    path = tmp_path / "run.jsonl"
    value = "hdr-secret-value-4242"
    with HostileServer(hostile.echo_headers(400)) as server:
        rec = kernel.llm("record:openai:m", path=str(path), base_url=server.url, api_key="x",
                         headers={"X-Api-Key": value})
        with pytest.raises(BadRequestError):
            rec.complete("hi")
    text = path.read_text()
    assert "x-api-key" in text and value not in text


def test_a_record_made_with_a_short_key_replays(kernel, tmp_path):
    """Recording with api_key='x' keeps every 'x' in the file, so the run replays."""
    path = tmp_path / "run.jsonl"
    with OpenAIServer(key="x") as server:
        rec = kernel.llm("record:openai:m", path=str(path), base_url=server.url, api_key="x")
        assert rec.complete("explain xml to an expert").text == "echo: explain xml to an expert"
    assert "e***plain" not in path.read_text()
    replay = kernel.llm("replay:any", path=str(path))
    assert replay.complete("explain xml to an expert").text == "echo: explain xml to an expert"


def test_mask_secrets_keeps_words_that_contain_a_mid_length_secret():
    """A secret of 8-19 characters is masked where it stands alone, not inside a longer token."""
    assert mask("key abcdefgh, abcdefghij", ["abcdefgh"]) == "key ***, abcdefghij"
    assert mask('{"k": "abcdefgh"}', ["abcdefgh"]) == '{"k": "***"}'


def test_mask_secrets_masks_long_secrets_anywhere():
    """A secret of 20+ characters is masked even glued to other text."""
    secret = "s" * 10 + "0123456789"
    assert mask(f"Bearer{secret}x", [secret]) == "Bearer***x"


@given(st.text(), st.text(min_size=1, max_size=MIN_MASK_LENGTH - 1))
def test_short_values_are_never_masked(text, secret):
    """Values shorter than MIN_MASK_LENGTH leave any text unchanged."""
    assert mask(text, [secret]) == text


@given(st.text(), st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=20, max_size=40),
       st.text())
def test_long_secrets_never_survive(before, secret, after):
    """A value of 20+ characters never appears in the masked text, wherever it was put."""
    assert secret not in mask(before + secret + after, [secret]) or secret in "***"


def test_header_secrets_takes_credentials_out_of_schemes_and_cookies():
    """Authorization yields the token after the scheme; Cookie each cookie's value; other headers nothing."""
    values = header_secrets({"Authorization": "Bearer tok-123456789", "Cookie": "a=1; sid=cookie-98765",
                                   "X-Request-Id": "req-0123456789"})
    assert "tok-123456789" in values and "cookie-98765" in values
    assert "req-0123456789" not in values


def test_a_dummy_key_named_like_a_provider_does_not_mask_the_provider_name(kernel):
    """api_key='ollama' (Ollama's documented dummy key) leaves 'ollama' in messages alone."""
    assert mask("ollama (http://127.0.0.1:11434) reported an error", ["ollama"]).startswith("ollama (")


def test_json_escaped_forms_of_a_secret_are_masked():
    """A secret with characters JSON escapes is masked in a JSON record line too."""
    import json

    secret = 'pa"ss\\word-0123456789'
    assert secret not in mask(json.dumps({"m": f"echo {secret}"}), [secret]).replace("***", "")
    assert "***" in mask(json.dumps({"m": f"echo {secret}"}), [secret])
