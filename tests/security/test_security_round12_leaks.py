"""Round twelve, secrets and leaks (one attack per test: a real HTTP server on 127.0.0.1, the ``zagent`` command,
or what a repr, schema, trajectory or serialized object keeps).

Tried, and whether it got through before this round (see the report at the end of each test's docstring):
a key echoed by a hostile server in forms the maskers did not know (every byte percent-encoded, upper or lower
case; JSON ``\\u`` escapes shown raw; HTML numeric entities; hex; zero-width characters between its letters),
in errors, stream error events split across chunks, tool errors, OTel spans and the CLI; a URL query key under a
percent-encoded name (``api%5Fkey=``); a URL's password in JSON with escaped slashes; an image URL's password and
signature in ``repr(Part)`` and trajectories; a tool's dict default holding a credential (schema); a tool's error
quoting a nested secret-named argument; short keys, keys one a prefix of another and keys full of regex
metacharacters; what masking must leave alone; ``attrs.asdict`` of a provider object and ``msgspec.json.encode`` of
an agent's spec (both showed the secrets they hold as given).
"""

import base64
import json
from urllib.parse import quote

import pytest

from zagent import Kernel, ZagentError, mask_userinfo
from tests.servers.loopback import LoopbackServer, Reply
from tests.servers.openai_server import completion, sse

from .conftest import error_chain as chain, run_cli

KEY = "sk-r12-SECRETKEY-0123456789abcdef"
PROVIDERS = ["zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama"]
NETWORK = ["openai:gpt-x", "openai-responses:gpt-x", "anthropic:claude-x", "ollama:llama"]


@pytest.fixture
def k():
    kernel = Kernel(plugins=PROVIDERS, entry_points=False)
    yield kernel
    kernel.close()


def failure(llm, stream=False):
    with pytest.raises(ZagentError) as err:
        if stream:
            for _ in llm.stream("hi"):
                pass
        else:
            llm.complete("hi")
    return err.value


def leaked(text, *secrets):
    return [s for s in secrets if s in text]


# -- a key echoed in forms the maskers did not know ---------------------------------------------------------------


def every_byte_percent(value, lower=False):
    text = "".join(f"%{b:02X}" for b in value.encode())
    return text.lower() if lower else text


def u_escaped(value):
    return "".join(f"\\u{ord(c):04x}" for c in value)


def html_entities(value):
    return "".join(f"&#{ord(c)};" for c in value)


def zero_width(value):
    return "\u200b".join(value)


#: how a hostile server echoes the key (the form), and the reply carrying it
ECHOES = {
    "every byte percent-encoded": (every_byte_percent(KEY), "application/json"),
    "every byte percent-encoded, lower case": (every_byte_percent(KEY, lower=True), "application/json"),
    "JSON \\u escapes shown raw": (u_escaped(KEY), "text/plain"),
    "HTML numeric entities": (html_entities(KEY), "text/html"),
    "hex": (KEY.encode().hex(), "application/json"),
    "zero-width spaces between its characters": (zero_width(KEY), "application/json"),
    "only its dashes percent-encoded": (KEY.replace("-", "%2D"), "application/json"),
}


def _echo_reply(form, content_type):
    if content_type == "application/json":
        return lambda request: Reply.json({"error": {"message": f"bad key {form} given", "type": "auth"}}, 401)
    body = f"<p>bad key {form} given</p>" if content_type == "text/html" else f'bad key "{form}" given'
    return lambda request: Reply(status=401, body=body.encode(), content_type=content_type)


@pytest.mark.parametrize("provider", NETWORK)
@pytest.mark.parametrize("how", list(ECHOES))
def test_a_key_echoed_in_an_unknown_encoding_is_masked(k, provider, how):
    """Attack: a 401 whose text echoes the key encoded in a way ``encoded_forms`` does not list (every byte
    ``%XX``, ``\\uXXXX`` escapes in a body that is not JSON, ``&#115;`` entities, hex, zero-width spaces between
    its letters). Defence: error texts are also read decoded (``mask_pieces``); the run holding the key is
    masked, the server's words stay. Got through before: all but "only its dashes"."""
    form, content_type = ECHOES[how]
    with LoopbackServer(_echo_reply(form, content_type)) as server:
        err = failure(k.llm(provider, base_url=server.url, api_key=KEY, max_retries=0))
    text = chain(err)
    assert "bad key" in str(err) and "given" in str(err)
    assert leaked(text, form, form[:40], KEY) == []
    assert form.encode("unicode_escape").decode()[:40] not in text  # nor as a repr shows it


@pytest.mark.parametrize("provider", ["openai:gpt-x", "anthropic:claude-x"])
def test_a_percent_encoded_key_in_a_stream_error_split_across_chunks_is_masked(k, provider):
    """Attack: a 200 event stream whose error event quotes the key with every byte percent-encoded, sent in 3-byte
    HTTP chunks. Defence: the stream error is masked like a reply's (got through before)."""
    form = every_byte_percent(KEY)
    if provider.startswith("anthropic"):
        body = (b"event: error\ndata: " + json.dumps({"type": "error", "error": {
            "type": "overloaded_error", "message": f"key {form} revoked"}}).encode() + b"\n\n")
    else:
        body = sse({"error": {"message": f"key {form} revoked", "type": "server_error"}})
    pieces = [body[i:i + 3] for i in range(0, len(body), 3)]
    with LoopbackServer(lambda r: Reply(chunks=pieces, content_type="text/event-stream")) as server:
        err = failure(k.llm(provider, base_url=server.url, api_key=KEY, max_retries=0), stream=True)
    assert "revoked" in str(err)
    assert leaked(chain(err), form, form[:30]) == []


METADATA_FORMS = {"cut short": KEY[:-4], "upper-cased": KEY.upper(), "hex": KEY.encode().hex(),
                  "every byte percent-encoded": every_byte_percent(KEY)}


@pytest.mark.parametrize("how", list(METADATA_FORMS))
def test_a_key_echoed_in_a_replys_metadata_in_another_form_is_masked(k, how):
    """Attack: a 200 reply whose ``model``, ``finish_reason`` and tool call ``id`` echo the key cut short,
    upper-cased, as hex or percent-encoded (round nine masked it there only as written and in ``encoded_forms``).
    zagent copies these into events, the run log and traces. Defence: metadata is masked like error texts
    (``mask_pieces``), with a fast check first (got through before)."""
    form = METADATA_FORMS[how]
    reply = {"id": "x", "object": "chat.completion", "model": form, "choices": [{"index": 0, "message": {
        "role": "assistant", "content": "hi", "tool_calls": [{"id": form, "type": "function", "function": {
            "name": "word_count", "arguments": "{}"}}]}, "finish_reason": form}]}
    with LoopbackServer(lambda r: Reply.json(reply)) as server:
        done = k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0).complete("hi")
    shown = f"{done.model} {done.finish_reason} {[c.id for c in done.tool_calls]}"
    assert [c.name for c in done.tool_calls] == ["word_count"]
    assert form[:20] not in shown


def test_ordinary_reply_metadata_stays(k):
    """Over-masking guard: a model name, a hex request id (vLLM's ``chatcmpl-<32 hex>``) and a call id that share
    no 16 characters with the key stay as the server sent them."""
    reply = {"id": "chatcmpl-9f8e7d6c5b4a39281706f5e4d3c2b1a0", "object": "chat.completion",
             "model": "gpt-4o-2024-08-06", "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi",
             "tool_calls": [{"id": "call_abc123def456ghi789", "type": "function", "function": {
                 "name": "word_count", "arguments": "{}"}}]}, "finish_reason": "tool_calls"}]}
    with LoopbackServer(lambda r: Reply.json(reply)) as server:
        done = k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0).complete("hi")
    assert done.model == "gpt-4o-2024-08-06" and done.finish_reason == "tool_calls"
    assert [c.id for c in done.tool_calls] == ["call_abc123def456ghi789"]


def test_a_basic_pair_of_user_and_key_echoed_is_masked(k):
    """Held: a proxy echoes base64 of ``user:<key>`` (the key sent as a Basic password by a gateway): masked at
    every base64 alignment."""
    echoed = base64.b64encode(f"apikey:{KEY}".encode()).decode()
    with LoopbackServer(lambda r: Reply.json({"error": {"message": f"saw Basic {echoed}"}}, 401)) as server:
        err = failure(k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0))
    assert "saw Basic" in str(err) and echoed[12:40] not in chain(err)


def test_a_key_in_a_validation_errors_input_is_masked(k):
    """Held: a 422 listing the request's ``Authorization`` header as the ``input`` it refused."""
    with LoopbackServer(lambda r: Reply.json({"detail": [{"loc": ["header", "authorization"], "msg": "bad",
                                                          "input": f"Bearer {KEY}"}]}, 422)) as server:
        err = failure(k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0))
    assert KEY not in chain(err)


def test_a_key_in_a_redirects_location_is_masked(k):
    """Held: a 302 to another host whose ``Location`` quotes the key under an innocent name (``?q=<key>``): not
    followed, and the error names the location masked."""
    with LoopbackServer(lambda r: Reply(status=302, headers={"location": f"http://evil.example/?q={KEY}"})) as server:
        err = failure(k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0))
    assert "evil.example" in str(err) and KEY not in chain(err)
    assert len(server.requests) == 1


@pytest.mark.parametrize("encode", [every_byte_percent, lambda v: v.encode().hex()], ids=["percent", "hex"])
def test_httpcore_debug_lines_hide_a_key_echoed_encoded_in_a_response_header(k, caplog, encode):
    """Attack: the app logs at DEBUG; the server answers with a header quoting the key it got, every byte
    percent-encoded (or hex). httpcore logs every response header. Round eleven's log filter masked the forms a
    ``Masker`` lists. Defence: log records are read decoded too (got through before)."""
    import logging

    caplog.set_level(logging.DEBUG)
    form = encode(KEY)
    with LoopbackServer(lambda r: Reply.json({"id": "x", "object": "chat.completion", "model": "m", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]},
            headers={"x-echo-auth": form})) as server:
        assert k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0).complete("hi").text == "hi"
    assert "receive_response_headers" in caplog.text and "x-echo-auth" in caplog.text
    assert leaked(caplog.text, form[:30], KEY) == []


def test_zagent_run_prints_no_percent_encoded_key(tmp_path):
    """Attack: ``zagent run --json`` of an agent whose server answers 401 quoting the key with every byte
    percent-encoded. Defence: neither stdout nor stderr shows it (got through before)."""
    form = every_byte_percent(KEY)
    spec = {"name": "Evil", "prompt": "Answer: {question}", "inputs": [{"name": "question"}],
            "outputs": [{"name": "answer"}], "parse_mode": "str"}
    with LoopbackServer(_echo_reply(form, "application/json")) as server:
        spec["llm_config"] = {"model": "openai:gpt-x", "api_key": KEY, "max_retries": 0, "base_url": server.url}
        path = tmp_path / "agent.json"
        path.write_text(json.dumps(spec))
        done = run_cli("run", str(path), "-i", "question=why", "--json", plugins="openai,parsers,actions,react,cli")
    out = done.stdout + done.stderr
    assert done.returncode == 1 and "bad key" in out
    assert leaked(out, form[:30], KEY) == []


# -- environment secrets quoted encoded by a tool ------------------------------------------------------------------

ENV_KEY = "sk-r12-ENVKEY-abcdef0123456789"


@pytest.mark.parametrize("encode", [every_byte_percent, u_escaped, lambda v: v.encode().hex(), zero_width],
                         ids=["percent", "u-escapes", "hex", "zero-width"])
def test_a_tool_error_quoting_an_environment_key_encoded_is_masked(monkeypatch, encode):
    """Attack: a tool fails with a library's message quoting ``OPENAI_API_KEY`` encoded (percent, ``\\u``, hex,
    zero-width spaces). The error is the tool result the model reads and the ``tool_end`` event's error.
    Defence: ``mask_env`` reads error texts decoded too (got through before)."""
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    form = encode(ENV_KEY)
    events = []

    class Events:
        def zagent_event(self, event):
            if event.type == "tool_end":
                events.append(json.dumps(dict(event.data), default=str))

    def fetch(url: str) -> str:
        """Fetch a URL."""
        raise RuntimeError(f"upstream refused credential {form} for {url}")

    k = Kernel(plugins=[Events()], entry_points=False)
    k.add_tool(fetch)
    try:
        result = k.run_tool({"name": "fetch", "arguments": {"url": "https://example.org"}})
    finally:
        k.close()
    assert "upstream refused credential" in str(result.content) and "https://example.org" in str(result.content)
    assert leaked(str(result.content) + "".join(events), form[:30], ENV_KEY) == []


VAULT = "vault-r12-SECRET-0099887766"


def test_a_tool_error_quoting_a_nested_secret_argument_is_masked():
    """Attack: a rail fills ``auth={"token": ...}`` from a vault (the model never saw it); the tool fails quoting
    its arguments. Round eleven masked top-level secret-named arguments only. Defence: secret-named values at any
    depth of the call's arguments are masked in its error (got through before)."""
    from zagent import Rewrite

    class Inject:
        def zagent_before_tool_call(self, call, ctx):
            return Rewrite({**call.arguments, "auth": {"user": "deploy", "token": VAULT}})

    def deploy(target: str, auth: dict = {}) -> str:  # noqa: B006 - the rail fills it
        """Deploy."""
        raise RuntimeError(f"deploy of {target} failed with {auth}")

    k = Kernel(plugins=[Inject()], entry_points=False)
    k.add_tool(deploy)
    try:
        result = k.run_tool({"name": "deploy", "arguments": {"target": "prod"}})
    finally:
        k.close()
    assert "deploy of prod failed" in str(result.content) and "'user': 'deploy'" in str(result.content)
    assert VAULT not in str(result.content)


# -- a tool's defaults offered to the model ------------------------------------------------------------------------


def test_a_tools_dict_default_holding_a_credential_is_not_offered():
    """Attack: a tool ``def call(q, options={"api_key": "..."})``: the default dict goes into the schema every
    request sends the model. Round eleven left out secret-named parameters' defaults only. Defence: a default
    holding a secret-named key at any depth is left out too (got through before)."""
    def call(q: str, options: dict = {"region": "eu", "api_key": "dflt-r12-SECRET-112233"}) -> str:  # noqa: B006
        """Call the service."""
        return q

    k = Kernel(entry_points=False)
    k.add_tool(call)
    [tool] = k.tools()
    k.close()
    assert "dflt-r12-SECRET-112233" not in json.dumps(tool.parameters)
    assert "options" in tool.parameters["properties"]


def test_a_tools_headers_default_with_authorization_is_not_offered():
    """Attack: ``headers: dict = {"Authorization": "Bearer ..."}`` as a tool's default. Defence: left out of the
    schema (got through before)."""
    def get(url: str, headers: dict = {"Authorization": "Bearer hdr-r12-SECRET-99887766"}) -> str:  # noqa: B006
        """GET a URL."""
        return url

    k = Kernel(entry_points=False)
    k.add_tool(get)
    [tool] = k.tools()
    k.close()
    assert "hdr-r12-SECRET-99887766" not in json.dumps(tool.parameters)


def test_a_tools_public_dict_default_stays_offered():
    """Over-masking guard: a dict default without credentials (``{"region": "eu", "page_token": "c1"}``) stays in
    the schema."""
    def search(q: str, options: dict = {"region": "eu", "page_token": "c1"}) -> str:  # noqa: B006
        """Search."""
        return q

    k = Kernel(entry_points=False)
    k.add_tool(search)
    [tool] = k.tools()
    k.close()
    assert tool.parameters["properties"]["options"]["default"] == {"region": "eu", "page_token": "c1"}


# -- URLs ------------------------------------------------------------------------------------------------------------

QUERY_KEY = "qk-r12-ABCDEF1234567890"
PASSWORD = "pw-r12-Secret-998877"


@pytest.mark.parametrize("name", ["api%5Fkey", "api%5fkey", "%61pi_key", "access%5Ftoken", "X-Amz-Signatur%65"])
def test_a_query_key_under_a_percent_encoded_name_is_masked(name):
    """Attack: ``?api%5Fkey=<key>``: the server decodes the name to ``api_key``, but ``mask_userinfo`` read it as
    written, so reprs, ``llm_start`` events and saved specs kept the value. Defence: the name is decoded first
    (got through before)."""
    assert mask_userinfo(f"http://h/v1?{name}={QUERY_KEY}&page=2") == f"http://h/v1?{name}=***&page=2"


def test_a_percent_encoded_query_key_name_is_not_in_the_models_repr(k):
    """Attack: the same URL as a model's ``base_url``: its repr (a log line) showed the key (got through)."""
    llm = k.llm("openai:gpt-x", base_url=f"http://127.0.0.1:9/v1?api%5Fkey={QUERY_KEY}")
    assert QUERY_KEY not in repr(llm)


def test_a_url_password_in_json_with_escaped_slashes_is_masked():
    """Attack: a URL written by a JSON encoder escaping slashes (PHP's ``https:\\/\\/u:pw@host``), as a server
    echoes its configuration. Defence: ``mask_userinfo`` reads ``:\\/\\/`` as ``://`` (got through before)."""
    text = json.dumps({"upstream": f"https://app:{PASSWORD}@db.example/x"}).replace("/", "\\/")
    assert PASSWORD not in mask_userinfo(text)
    assert "db.example" in mask_userinfo(text)


IMAGE_PW = "pw-r12-IMG-Secret-998877"
IMAGE_SIG = "sig-r12-abcdef0123456789"
IMAGE_URL = f"https://alice:{IMAGE_PW}@cdn.example/a.png?X-Amz-Signature={IMAGE_SIG}&size=2"


def test_an_image_urls_credentials_are_not_in_the_parts_repr():
    """Attack: an image given by a presigned URL with a password (``Message.user(text, image=url)``); the repr of
    the part and of its message (a log line, a traceback) showed both. Defence: a part's placeholder masks URL
    credentials (got through before)."""
    from zagent.types import Message

    message = Message.user("see", image=IMAGE_URL)
    for text in (repr(message.parts[0]), repr(message), str(message)):
        assert "cdn.example/a.png" in text and "size=2" in text
        assert leaked(text, IMAGE_PW, IMAGE_SIG) == []


def test_an_image_urls_credentials_are_not_in_the_trajectory(tmp_path):
    """Attack: a ReAct run given that image writes its trajectory (JSONL kept for training data). Defence: the
    part's placeholder there is masked (got through before)."""
    from zagent.plugins.react import ReActLoop
    from zagent.types import Message

    k = Kernel(["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react"],
               entry_points=False)
    llm = k.llm("scripted:m", replies=["a cat"], profile={"input_media": ["image"]})
    path = tmp_path / "t.jsonl"
    try:
        ReActLoop(kernel=k, llm=llm, tools=[], trajectory_path=str(path)).run(Message.user("see", image=IMAGE_URL))
    finally:
        k.close()
    written = path.read_text()
    assert "cdn.example/a.png" in written
    assert leaked(written, IMAGE_PW, IMAGE_SIG) == []


LONG_PW = "pw-r12-LONG-Secret-0123456789abcdefghijklmnopqrstuvwxyz0123456789"


def test_an_image_url_refused_quotes_no_password_cut_before_its_at():
    """Attack: ``Message.user(text, image="ftp://alice:<long password>@host/a.png")``: the refusal quoted the
    URL's first 60 characters, which ended inside the password, so no ``@`` was left for ``mask_userinfo`` to
    find. Defence: the URL is masked before it is cut (got through before)."""
    from zagent.types import Message

    with pytest.raises(ZagentError) as err:
        Message.user("see", image=f"ftp://alice:{LONG_PW}@cdn.example/a.png")
    assert "not an http(s)://" in str(err.value)
    assert LONG_PW[:16] not in chain(err.value)


# -- public objects serialized ---------------------------------------------------------------------------------------

HEADER_SECRET = "hdr-r12-SECRET-445566"


def test_attrs_asdict_of_a_model_hides_its_secret_headers(k):
    """Attack: ``attrs.asdict(llm.llm)`` (a debugging dump, an app's config export) of a model given
    ``headers={"X-Custom-Token": ...}``: the header value came out as written. Defence: a secret-named header's
    value is held as a ``Secret`` (revealed where the HTTP client is made)."""
    import attrs

    llm = k.llm("openai:gpt-x", base_url="http://127.0.0.1:9/v1", api_key=KEY,
                headers={"X-Custom-Token": HEADER_SECRET, "X-Region": "eu"})
    dumped = repr(attrs.asdict(llm.llm))
    assert "X-Region" in dumped and "eu" in dumped
    assert leaked(dumped, HEADER_SECRET, KEY) == []


def test_a_secret_header_is_sent_as_given(k):
    """Guard for whatever fixes the above: the server receives the secret header's real value."""
    with LoopbackServer(lambda r: completion("hi")) as server:
        llm = k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0,
                    headers={"X-Custom-Token": HEADER_SECRET})
        assert llm.complete("hi").text == "hi"
    assert server.requests[0].headers["x-custom-token"] == HEADER_SECRET


# -- masking policy: short keys, overlaps, metacharacters, and what stays ------------------------------------------


def _error_quoting(text):
    return lambda request: Reply.json({"error": {"message": text, "type": "invalid_request_error"}}, 401)


def test_a_short_key_echoed_alone_is_masked_and_words_stay(k):
    """Policy: a 7-character key with a digit (``hunt3r2``) is masked where it stands alone, also with every
    byte percent-encoded (that form got through before); the same letters inside a word are kept."""
    short = "hunt3r2"
    with LoopbackServer(_error_quoting(f"key {short} / {every_byte_percent(short)} rejected; hunt3r2x stays")) as s:
        err = failure(k.llm("openai:gpt-x", base_url=s.url, api_key=short, max_retries=0))
    assert "rejected" in str(err) and "hunt3r2x stays" in str(err)
    assert f" {short} " not in str(err) and every_byte_percent(short) not in str(err)


def test_a_placeholder_key_does_not_mangle_the_message(k):
    """Over-masking guard: a letters-only key under 8 (``ollama``) or a key under 6 (``x1``) leaves the server's
    words alone, encoded or not (``ollama``, ``%6F%6C%6C%61%6D%61``, ``x1``)."""
    message = "model ollama not found (see %6F%6C%6C%61%6D%61 and x1)"
    for key in ("ollama", "x1"):
        with LoopbackServer(_error_quoting(message)) as s:
            err = failure(k.llm("openai:gpt-x", base_url=s.url, api_key=key, max_retries=0))
        assert message in str(err)


def test_keys_one_a_prefix_of_another_are_both_masked(k):
    """Attack: the api key is a prefix of a secret header's value (two secrets of one vault), and the server
    echoes the longer one cut short, the shorter one, and the longer one with every byte percent-encoded (that
    form got through before). Defence: each is masked; the text around stays."""
    short_key = "sk-r12-PREFIX-1234"
    long_token = short_key + "-5678-LONGER-SECRET"
    echoed = f"a={short_key} b={long_token[:-3]} c={every_byte_percent(long_token)} end"
    with LoopbackServer(_error_quoting(echoed)) as s:
        err = failure(k.llm("openai:gpt-x", base_url=s.url, api_key=short_key, max_retries=0,
                            headers={"X-Vault-Token": long_token}))
    text = chain(err)
    assert str(err).count("***") >= 3 and "a=***" in str(err) and "end)" in str(err)
    assert leaked(text, short_key, long_token[:-3], every_byte_percent(long_token)[:30]) == []


REGEX_KEY = r"sk-r12.*+?[(|)]^$\g<0>{2}-SECRET"


def test_a_key_full_of_regex_metacharacters_is_masked(k):
    """Attack: a key made of regex metacharacters and a replacement group (``.*+?[(|)]^$\\g<0>``), echoed raw,
    JSON-escaped and percent-encoded. Held: it is masked as a literal; nothing else is."""
    echoed = f"raw {REGEX_KEY} json {json.dumps(REGEX_KEY)[1:-1]} pct {quote(REGEX_KEY, safe='')} all " \
             f"{every_byte_percent(REGEX_KEY)} done"
    with LoopbackServer(_error_quoting(echoed)) as s:
        err = failure(k.llm("openai:gpt-x", base_url=s.url, api_key=REGEX_KEY, max_retries=0))
    assert "raw *** json *** pct *** all *** done" in str(err)
    assert REGEX_KEY not in chain(err)


ORDINARY = ("request req_7f3a9c2b1d0e4f5a failed; see https://status.example/a%20b?page=2 and "
            "&#169; 2026 (trace 4f7a1c2e9b3d5a6f8e0c1b2a3d4e5f60, zero\u200bwidth)")


def test_decoding_leaves_text_without_a_secret_alone(k):
    """Over-masking guard: request ids, percent-encoded URLs, HTML entities, long hex trace ids and zero-width
    characters that hold no secret are kept as the server wrote them."""
    with LoopbackServer(_error_quoting(ORDINARY)) as s:
        err = failure(k.llm("openai:gpt-x", base_url=s.url, api_key=KEY, max_retries=0))
    for part in ("req_7f3a9c2b1d0e4f5a", "https://status.example/a%20b?page=2", "&#169; 2026",
                 "4f7a1c2e9b3d5a6f8e0c1b2a3d4e5f60"):
        assert part in str(err)


def test_an_encoded_word_equal_to_no_secret_stays_in_a_tool_error(monkeypatch):
    """Over-masking guard: with a secret environment key set, a tool error quoting other percent-encoded or hex
    text keeps it."""
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)

    def fetch(url: str) -> str:
        """Fetch."""
        raise RuntimeError(f"404 for {url} (etag 9b2c7e4f1a3d5b6c8e0f1a2b3c4d5e6f)")

    k = Kernel(entry_points=False)
    k.add_tool(fetch)
    try:
        result = k.run_tool({"name": "fetch", "arguments": {"url": "https://ex.org/caf%C3%A9?q=a%2Fb"}})
    finally:
        k.close()
    assert "https://ex.org/caf%C3%A9?q=a%2Fb" in str(result.content)
    assert "9b2c7e4f1a3d5b6c8e0f1a2b3c4d5e6f" in str(result.content)


def test_msgspec_encoding_of_an_agents_spec_hides_its_key():
    """Attack: ``msgspec.json.encode(agent.spec)`` (an app exporting its agents) of an agent whose ``llm_config``
    holds its own ``api_key``. Defence: the agent keeps a public copy of its spec (``public_spec``)."""
    import msgspec

    k = Kernel(["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions"], entry_points=False)
    try:
        agent = k.agent({"name": "A", "prompt": "Answer: {q}", "inputs": [{"name": "q"}],
                         "outputs": [{"name": "answer"}], "parse_mode": "str",
                         "llm_config": {"model": "openai:gpt-x", "api_key": KEY, "base_url": "http://127.0.0.1:9/v1"}})
        encoded = msgspec.json.encode(agent.spec).decode()
    finally:
        k.close()
    assert KEY not in encoded


def test_a_batch_failure_quoting_an_environment_key_as_hex_is_masked(tmp_path, monkeypatch):
    """Attack: a batch item fails with a library message quoting ``MY_SERVICE_API_KEY`` as hex; the failed record
    goes to the ``out`` file that ``zagent eval`` reports read. Defence: masked like every event error (got
    through before)."""
    monkeypatch.setenv("MY_SERVICE_API_KEY", ENV_KEY)
    form = ENV_KEY.encode().hex()

    class Failing:
        name = "boom"

        async def aexecute(self, *, inputs, ctx=None):
            raise RuntimeError(f"signing failed for digest input {form}")

    k = Kernel(["zagent.plugins.batch"], entry_points=False)
    try:
        k.batch(Failing(), [{"id": "a", "x": 1}], out=str(tmp_path / "out.jsonl"))
    finally:
        k.close()
    written = (tmp_path / "out.jsonl").read_text()
    assert "signing failed" in written and form[:32] not in written


# -- eval reports --------------------------------------------------------------------------------------------------

EVAL_PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.batch",
                "zagent.plugins.evals"]
QA = {"name": "QA", "prompt": "Answer: {question}", "inputs": [{"name": "question", "type": "string"}],
      "outputs": [{"name": "answer", "type": "string"}], "parse_mode": "str"}
SCORER_KEY = "mod-r12-SECRET-0011223344"


def _eval(scorer_factory, scorer_spec, tmp_path):
    from zagent.plugins.evals import evaluate

    class Scorers:
        def zagent_register_scorers(self, register):
            register("moderation", scorer_factory)

    k = Kernel(plugins=[*EVAL_PLUGINS, Scorers()], entry_points=False, strict=True)
    try:
        agent = k.agent(QA)
        agent.llm = k.llm("scripted:qa", replies=["Paris"])
        report = evaluate(k, agent, [{"id": "paris", "inputs": {"question": "capital?"}, "expected": "Paris"}],
                          scorers=[scorer_spec], out=str(tmp_path / "report.json"))
    finally:
        k.close()
    return report, (tmp_path / "report.json").read_text()


def test_a_scorers_api_key_option_is_not_in_the_eval_report(tmp_path):
    """Attack: ``zagent eval --scorer "moderation:api_key=<key>,threshold=0.5"`` (a plugin's scorer calling a
    moderation API): the report names a scorer by its name and options, so the key was its label in the report
    file and the table. Defence: a secret-named option shows as ``***`` in the label (got through before)."""
    report, written = _eval(lambda options, kernel: (lambda output, expected, case: True),
                            {"name": "moderation", "api_key": SCORER_KEY, "threshold": 0.5}, tmp_path)
    [label] = report.cases[0].scores
    assert "threshold=0.5" in label and "moderation" in label
    assert SCORER_KEY not in label and SCORER_KEY not in written


def test_a_scorer_failing_with_an_environment_key_is_masked_in_the_eval_report(tmp_path, monkeypatch):
    """Attack: a scorer's API client fails with a message quoting ``MODERATION_API_KEY``'s value (and a URL
    password); the failed score's reason goes into the report. Defence: the reason is masked like every error
    (got through before)."""
    monkeypatch.setenv("MODERATION_API_KEY", SCORER_KEY)

    def factory(options, kernel):
        def score(output, expected, case):
            raise RuntimeError(f"POST https://bob:{PASSWORD}@mod.example failed: bad key {SCORER_KEY}")
        return score

    report, written = _eval(factory, "moderation", tmp_path)
    reason = report.cases[0].scores["moderation"].reason
    assert "the scorer failed" in reason and "mod.example" in reason
    assert leaked(reason + written, SCORER_KEY, PASSWORD) == []


# -- the environment key and hosts a spec names ---------------------------------------------------------------------


@pytest.mark.parametrize("config", [
    {"llm": "fallback:openai:gpt-x,openai:gpt-y", "llm_config": {"base_url": "EVIL"}},
    {"llm_config": {"model": "fallback:openai:gpt-x,openai:gpt-y", "base_url": "EVIL"}},
    {"llm_config": {"model": "openai:gpt-x", "api_base": "EVIL", "base-url": "EVIL", "OPENAI_BASE_URL": "EVIL",
                    "endpoint": "EVIL", "max_retries": 0, "timeout": 2}},
], ids=["fallback model", "fallback in llm_config", "other names for the base URL"])
def test_an_untrusted_spec_cannot_send_the_environment_key_elsewhere(monkeypatch, config):
    """Held: an untrusted agent file names its own host for a ``fallback:`` chain, or under other names
    (``api_base``, ``base-url``, ``OPENAI_BASE_URL``, ``endpoint``), with ``OPENAI_API_KEY`` set: refused before
    any request, or the names are request fields sent to the configured host; the hostile host never gets a
    request carrying the key."""
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # the user's own (down) server
    k = Kernel(["zagent.plugins.openai", "zagent.plugins.fallback", "zagent.plugins.parsers",
                "zagent.plugins.actions"], entry_points=False)
    try:
        with LoopbackServer(lambda r: completion("hi")) as evil:
            filled = json.loads(json.dumps(config).replace('"EVIL"', json.dumps(evil.url)))
            with pytest.raises(ZagentError):
                agent = k.agent({"name": "Evil", "prompt": "Answer: {question}", "inputs": [{"name": "question"}],
                                 "outputs": [{"name": "answer"}], "parse_mode": "str", **filled})
                agent(question="x")
    finally:
        k.close()
    assert evil.requests == []
