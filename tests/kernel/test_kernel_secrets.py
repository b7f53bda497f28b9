"""zagent.agentkit.secrets.public_data: settings as plain data with every secret removed, at any depth."""

import json

from hypothesis import given
from hypothesis import strategies as st

from zagent import Secret
from zagent.agentkit.secrets import looks_secret, public_data

SECRET = "s3cr3t-VALUE"

keys = st.sampled_from(["model", "api_key", "Authorization", "x-auth-token", "headers", "opts", "temperature",
                        "Password", "cookie", "name", "refresh_token", "client_secret"])
leaves = st.one_of(st.just(SECRET), st.integers(), st.booleans(), st.none(), st.text(max_size=5))
data = st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                    st.dictionaries(keys, inner, max_size=4)), max_leaves=20)


def _secret_paths(value, under_secret=False):
    """Whether SECRET sits under a secret-looking key anywhere in ``value``."""
    if isinstance(value, dict):
        return any(_secret_paths(v, under_secret or looks_secret(k)) for k, v in value.items())
    if isinstance(value, list):
        return any(_secret_paths(v, under_secret) for v in value)
    return under_secret and value == SECRET


@given(data)
def test_no_value_under_a_secret_key_survives(value):
    """Whatever the nesting, nothing under a secret-looking key is kept (and the rest is JSON)."""
    out = public_data(value)
    assert not _secret_paths(out)
    json.dumps(out)


def test_plain_settings_and_var_references_are_kept():
    """Non-secret settings pass unchanged; a ${VAR} reference under a secret key is kept, a literal is not."""
    value = {"model": "m", "api_key": "${OPENAI_API_KEY}", "token": "literal",
             "headers": {"Authorization": "Bearer x", "Accept": "json"}, "stop": ["a", 1]}
    assert public_data(value) == {"model": "m", "api_key": "${OPENAI_API_KEY}",
                                  "headers": {"Accept": "json"}, "stop": ["a", 1]}


def test_secret_objects_and_clients_are_dropped():
    """Secret instances and non-data values (clients, functions) never appear in the output."""
    assert public_data({"a": Secret("x"), "b": [print, 1], "c": object()}) == {"b": [1]}


def test_settings_that_merely_mention_tokens_are_kept():
    """max_tokens, api_key_env and password_file are settings, not secrets: they survive a save."""
    value = {"max_tokens": 256, "max_completion_tokens": 9, "api_key_env": "MY_KEY", "password_file": "/p"}
    assert public_data(value) == value
    assert all(looks_secret(k) for k in ("api_key", "X-Auth-Token", "clientSecret", "APIKey", "Authorization"))
