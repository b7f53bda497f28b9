"""Checkpoint patches that append to lists inside an object of the state (``extend_in``/``lengths_in``)."""

import msgspec
import pytest

from zagent import ConfigError
from zagent.plugins.memory.errors import StoreError


def state_of(raw):
    return msgspec.json.decode(raw)


def test_nested_appends_apply_after_set_extend_and_update(store):
    """``extend_in`` grows ``state[field][key]`` (created if missing), after the other parts of the patch."""
    store.save("r", 1, {"values": {"log": ["a"], "x": 1}, "trace": []})
    store.save_patch("r", 2, {"after": 1, "extend": {"trace": [1]}, "update": {"values": {"x": 2}},
                              "extend_in": {"values": {"log": ["b", "c"], "new": [0]}},
                              "lengths_in": {"values": {"log": 1}}})
    store.save_patch("r", 3, msgspec.json.encode({"after": 2, "extend_in": {"values": {"log": ["d"]}},
                                                  "lengths_in": {"values": {"log": 3}}}))
    assert state_of(store.latest("r")[1]) == {"values": {"log": ["a", "b", "c", "d"], "x": 2, "new": [0]},
                                              "trace": [1]}
    assert state_of(store.load("r", 2))["values"]["log"] == ["a", "b", "c"]


def test_an_old_format_patch_still_applies_beside_new_ones(store):
    """A patch of the shape written before nested appends (the list whole in ``update``) applies as before."""
    store.save("r", 1, {"values": {"log": ["a"]}, "status": "running"})
    store.db.write(lambda c: c.execute(  # as zagent 3 wrote it, straight into the file
        "INSERT INTO checkpoints VALUES ('r', 2, 'workflow', 1.0, ?, X'7B7D', 1)",
        (b'{"after":1,"set":{"status":"running"},"update":{"values":{"log":["a","b"]}}}',)))
    store.save_patch("r", 3, {"after": 2, "extend_in": {"values": {"log": ["c"]}}, "lengths_in": {"values": {"log": 2}}})
    assert state_of(store.latest("r")[1]) == {"values": {"log": ["a", "b", "c"]}, "status": "running"}


@pytest.mark.parametrize("bad", [{"after": 1, "extend_in": []}, {"after": 1, "extend_in": {"values": ["a"]}},
                                 {"after": 1, "extend_in": {"values": {"log": "a"}}},
                                 {"after": 1, "lengths_in": {"values": {"log": "1"}}},
                                 {"after": 1, "lengths_in": {"values": {"log": True}}},
                                 b'{"after": 1, "extend_in": {"values": {"log": 1}}}'])
def test_malformed_nested_appends_are_config_errors(store, bad):
    """``extend_in`` must map fields to dicts of lists, ``lengths_in`` fields to dicts of ints."""
    store.save("r", 1, {"values": {}})
    with pytest.raises(ConfigError, match="patch"):
        store.save_patch("r", 2, bad)
    assert store.steps("r") == [1]


@pytest.mark.parametrize("before", [{"values": {"log": ["a", "b"]}}, {"values": {"log": "a"}}, {"values": 3}])
def test_a_nested_append_on_the_wrong_base_is_refused_on_read(store, before):
    """A list of the wrong length, an entry that is not a list, a field that is not an object: StoreError."""
    store.save("r", 1, {"values": {"log": ["a"]}})
    store.save_patch("r", 2, {"after": 1, "extend_in": {"values": {"log": ["b"]}}, "lengths_in": {"values": {"log": 1}}})
    store.db.write(lambda c: c.execute("UPDATE checkpoints SET state = ? WHERE step = 1",
                                       (msgspec.json.encode(before),)))
    with pytest.raises(StoreError, match="cannot be restored"):
        store.latest("r")
