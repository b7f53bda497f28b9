"""``scrub``: what the run log and tracing keep holds no secret, headers given as a mapping or as pairs."""

from __future__ import annotations

from hypothesis import given, strategies as st

from zagent.plugins.runlog.scrub import MASK, scrub

KEY = "sk-live-0123456789abcdef"


def test_secret_header_pairs_are_masked_like_a_mapping():
    """``headers=[["X-Api-Key", key], ["Accept", "json"]]`` (pairs, which httpx takes too): the key is ``***``, the
    other header stays, as with ``{"X-Api-Key": key}``."""
    kept = scrub({"llm_config": {"headers": [["X-Api-Key", KEY], ("Accept", "application/json")]}})
    assert kept == {"llm_config": {"headers": [["X-Api-Key", MASK], ["Accept", "application/json"]]}}
    assert scrub({"headers": {"X-Api-Key": KEY}}) == {"headers": {"X-Api-Key": MASK}}


@given(st.sampled_from(["Authorization", "x-api-key", "Cookie", "X-Auth-Token", "api-key"]),
       st.text(min_size=1, max_size=40))
def test_no_secret_header_value_survives_in_either_form(name, value):
    """Whatever the value, a secret-named header's value never comes out of ``scrub``, as pair or as mapping."""
    for headers in ({name: value}, [[name, value]], [(name, value)]):
        out = scrub({"headers": headers})["headers"]
        values = list(out.values()) if isinstance(out, dict) else [pair[1] for pair in out]
        assert values == [MASK]
