"""The redaction rail: ``rails["redact"]`` regexes replaced by ``[REDACTED]`` in results and replies."""

from zagent import Kernel, ToolCall, run_sync, tool
from zagent.plugins.rails import redaction


@tool
def leak() -> dict:
    """Return a secret."""
    return {"key": "sk-abc123", "n": 1}


@tool
def boom() -> str:
    """Fail with a secret in the message."""
    raise RuntimeError("bad key sk-zzz")


def make_kernel(config=None):
    k = Kernel(plugins=["zagent.plugins.rails", "zagent.plugins.offline"], entry_points=False, strict=True,
               config=config)
    k.add_tool(leak)
    k.add_tool(boom)
    return k


def ctx_with(k, **rails):
    return k.context(agent="a", agent_config={"rails": rails})


def run(k, ctx, name="leak"):
    return run_sync(k.arun_tool(ToolCall(id="1", name=name), ctx))


def test_result_content_is_redacted():
    """Matches in a tool result's content are replaced by ``[REDACTED]``."""
    k = make_kernel()
    r = run(k, ctx_with(k, redact=[r"sk-[A-Za-z0-9]+"]))
    assert "sk-abc123" not in r.content and "[REDACTED]" in r.content and r.state == "success"


def test_result_value_strings_are_redacted():
    """Strings inside a dict/list value are redacted too; other values are kept."""
    k = make_kernel()
    r = run(k, ctx_with(k, redact=[r"sk-[A-Za-z0-9]+"]))
    assert r.value == {"key": "[REDACTED]", "n": 1}


def test_error_messages_are_redacted():
    """A failed tool's error text is redacted as well."""
    k = make_kernel()
    r = run(k, ctx_with(k, redact=[r"sk-[a-z]+"]), name="boom")
    assert r.state == "error" and "sk-zzz" not in r.content + r.error


def test_result_without_matches_is_kept():
    """When nothing matches the rail keeps the original result."""
    k = make_kernel()
    r = run(k, ctx_with(k, redact=["password"]))
    assert "sk-abc123" in r.content


def test_custom_replacement():
    """``redact_with`` changes the replacement text."""
    k = make_kernel()
    r = run(k, ctx_with(k, redact=[r"sk-\w+"], redact_with="***"))
    assert "***" in r.content


def test_kernel_wide_redaction():
    """``kernel.config["rails"]["redact"]`` applies to every run."""
    k = make_kernel(config={"rails": {"redact": [r"sk-\w+"]}})
    assert "[REDACTED]" in run(k, k.context()).content


def test_invalid_pattern_withholds_the_result():
    """An invalid regex makes the rail fail, and the kernel withholds the result (fail closed)."""
    k = make_kernel()
    r = run(k, ctx_with(k, redact=["sk-("]))
    assert r.state == "blocked" and "sk-abc123" not in r.content


def test_patterns_are_compiled_once_per_set():
    """Compiling is cached per pattern set, not done per call."""
    redaction.compile_patterns.cache_clear()
    k = make_kernel()
    ctx = ctx_with(k, redact=[r"sk-\w+"])
    for _ in range(3):
        run(k, ctx)
    info = redaction.compile_patterns.cache_info()
    assert info.misses == 1 and info.hits == 2


def test_llm_replies_are_redacted_with_redact_llm():
    """With ``redact_llm: true`` model replies are redacted too."""
    k = make_kernel()
    llm = k.llm("scripted:m", replies=["your key is sk-abc123"])
    ctx = ctx_with(k, redact=[r"sk-\w+"], redact_llm=True)
    reply = run_sync(llm.asend(llm.request("hi"), ctx))
    assert reply.text == "your key is [REDACTED]"


def test_llm_replies_are_kept_without_redact_llm():
    """Without ``redact_llm`` model replies are not touched."""
    k = make_kernel()
    llm = k.llm("scripted:m", replies=["your key is sk-abc123"])
    reply = run_sync(llm.asend(llm.request("hi"), ctx_with(k, redact=[r"sk-\w+"])))
    assert reply.text == "your key is sk-abc123"


def test_llm_input_is_redacted_with_redact_llm_input():
    """With ``redact_llm_input: true`` the messages sent to the model are redacted before they leave."""
    k = make_kernel()
    llm = k.llm("scripted:m", replies=["ok"])
    ctx = ctx_with(k, redact=[r"sk-\w+"], redact_llm_input=True)
    run_sync(llm.asend(llm.request("my key is sk-abc123"), ctx))
    assert llm.requests[0].messages[0].content == "my key is [REDACTED]"


def test_a_replacement_is_never_read_as_a_template():
    """A spec's ``redact_with`` of ``\\g<0>`` (or ``\\1``) is text, not a back-reference: a kernel pattern's
    matches stay redacted, replaced by those very characters (before, ``\\g<0>`` put every match back)."""
    k = make_kernel(config={"rails": {"redact": [r"(sk-\w+)"]}})
    r = run(k, ctx_with(k, redact_with=r"\g<0>"))
    assert "sk-abc123" not in r.content and r"\g<0>" in r.content
    r = run(k, ctx_with(k, redact_with=r"\1"))
    assert "sk-abc123" not in r.content and r"\1" in r.content
