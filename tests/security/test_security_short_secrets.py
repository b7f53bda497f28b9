"""Attack: a 6-7 character API key (``hunter2``) echoed by a failing server; docs/security.md says masking starts at 6."""

import pytest

from zagent import Kernel, ProviderError
from zagent.agentkit.secrets import MIN_MASK_LENGTH, Masker
from tests.servers.loopback import LoopbackServer, Reply


@pytest.mark.parametrize("key", ["hunter2", "pa55wd", "s3cr3t", "k-9x_7Q"])
def test_a_short_api_key_echoed_by_the_server_is_masked(key):
    """A 6-7 character key with a digit or sign, echoed in a 400's message, is masked in the ProviderError."""
    k = Kernel(plugins=["zagent.plugins.openai"], entry_points=False)
    with LoopbackServer(lambda r: Reply.json({"error": {"message": "bad key: " + key}}, 400)) as server:
        try:
            with pytest.raises(ProviderError) as err:
                k.llm("openai:gpt-4o-mini", base_url=server.url, api_key=key, max_retries=0).complete("hi")
        finally:
            k.close()
    assert "bad key: ***" in str(err.value) and key not in f"{err.value} {err.value.body}"


def test_masking_starts_at_six_characters_as_documented():
    """MIN_MASK_LENGTH is 6 (docs/security.md, docs/http.md): a 6-character value is masked, a 5-character one
    is not, nor a letters-only word under 8 (api_key='ollama' leaves the provider's name in messages alone)."""
    assert MIN_MASK_LENGTH == 6
    assert Masker(["ab12cd"])("key ab12cd here") == "key *** here"
    assert Masker(["ab12c"])("key ab12c here") == "key ab12c here"
    assert Masker(["ollama"])("ollama (http://localhost:11434) returned HTTP 500") == \
        "ollama (http://localhost:11434) returned HTTP 500"



def test_the_docs_state_the_length_the_code_masks_from():
    """docs/security.md and docs/http.md name MIN_MASK_LENGTH's value (they once said 6 and 8)."""
    from pathlib import Path

    docs = Path(__file__).resolve().parents[2] / "docs"
    assert f"Masking starts at {MIN_MASK_LENGTH} characters" in (docs / "security.md").read_text(encoding="utf-8")
    http = " ".join((docs / "http.md").read_text(encoding="utf-8").split())
    assert f"values shorter than {MIN_MASK_LENGTH} characters are never masked" in http
