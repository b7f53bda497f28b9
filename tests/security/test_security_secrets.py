"""Attack: a server echoes the request's secret headers back, into errors and into ``record:`` files."""

import json

import pytest

from zagent import Kernel, ProviderError, Secret
from zagent.agentkit.secrets import MIN_MASK_LENGTH, Masker
from zagent.providerkit.masking import header_secrets
from tests.servers.loopback import LoopbackServer, Reply
from tests.servers.openai_server import completion

API_KEY = "sk-api-key-0123456789"
HEADERS = {"X-Api-Key": "xk-custom-secret-42", "Cookie": "session=cookie-secret-99",
           "X-Auth-Token": Secret("tok-secret-from-a-Secret"), "X-Trace": "trace-is-public"}
SECRETS = [API_KEY, "xk-custom-secret-42", "cookie-secret-99", "tok-secret-from-a-Secret"]


def dump(request):
    return json.dumps(dict(request.headers))


@pytest.fixture
def k():
    kernel = Kernel(plugins=["zagent.plugins.openai", "zagent.plugins.offline"], entry_points=False)
    yield kernel
    kernel.close()


def model(k, server, spec="openai:gpt-4o-mini", **options):
    return k.llm(spec, base_url=server.url, api_key=API_KEY, headers=HEADERS, max_retries=0, **options)


def test_secret_headers_echoed_in_an_error_are_masked(k):
    """A 400 whose message repeats every request header: the ProviderError shows none of the secrets."""
    with LoopbackServer(lambda r: Reply.json({"error": {"message": dump(r)}}, 400)) as server:
        with pytest.raises(ProviderError) as err:
            model(k, server).complete("hi")
    text = f"{err.value} {err.value.body}"
    assert "trace-is-public" in text  # the echo is there...
    for secret in SECRETS:
        assert secret not in text  # ...without the secrets


def test_secret_headers_were_really_sent(k):
    """The masking is in what is shown, not in what is sent: the server got the real values."""
    with LoopbackServer(lambda r: completion("ok")) as server:
        model(k, server).complete("hi")
    sent = server.requests[0].headers
    assert sent["x-api-key"] == "xk-custom-secret-42" and sent["x-auth-token"] == "tok-secret-from-a-Secret"


def test_secret_headers_echoed_in_a_reply_are_masked_in_the_record_file(k, tmp_path):
    """record: JSONL of a reply (and of an error) that echo the headers holds no secret."""
    path = tmp_path / "run.jsonl"
    replies = iter([lambda r: completion(dump(r)), lambda r: Reply.json({"error": {"message": dump(r)}}, 400)])
    with LoopbackServer(lambda r: next(replies)(r)) as server:
        llm = model(k, server, spec="record:openai:gpt-4o-mini", path=str(path))
        assert "xk-custom-secret-42" in llm.complete("hi").message.content  # the program gets the reply as sent
        with pytest.raises(ProviderError):
            llm.complete("again")
    text = path.read_text()
    assert "trace-is-public" in text and len(text.splitlines()) == 2
    for secret in SECRETS:
        assert secret not in text


def test_a_short_key_does_not_mangle_messages(k):
    """OPENAI_API_KEY=x: errors keep every 'x' (values shorter than MIN_MASK_LENGTH are not masked in text)."""
    with LoopbackServer(lambda r: Reply.json({"error": {"message": "xxx box"}}, 400)) as server:
        with pytest.raises(ProviderError) as err:
            k.llm("openai:gpt-4o-mini", base_url=server.url, api_key="x", max_retries=0).complete("hi")
    assert "xxx box" in str(err.value)


def test_header_secrets_and_masker():
    """header_secrets picks secret-named headers and Secrets (and a bearer token's credential); the Masker
    replaces them, and their JSON-escaped forms, longest first."""
    found = header_secrets({"Authorization": "Bearer abcdef123456", "Proxy-Authorization": "Basic zzzzzz9",
                            "Accept": "application/json", "X-Other": Secret("s3cr3t-value")})
    assert set(found) == {"Bearer abcdef123456", "abcdef123456", "Basic zzzzzz9", "zzzzzz9", "s3cr3t-value"}
    masker = Masker(found + ["quote\"secret"])
    assert masker("auth: Bearer abcdef123456 and abcdef123456") == "auth: *** and ***"
    assert masker(json.dumps({"v": "quote\"secret"})) == '{"v": "***"}'
    assert Masker(["x" * (MIN_MASK_LENGTH - 1)])("xxxxx") == "xxxxx"
