"""``Stash``/``StashKey``: typed per-kernel and per-run plugin state (issue 18, item 3)."""

import pytest

import zagent
from zagent._runs.stash import Stash, StashKey


def test_keys_compare_by_identity():
    """Two keys with the same name are different keys: plugins cannot collide by accident."""
    a, b = StashKey("counter"), StashKey("counter")
    stash = Stash()
    stash[a] = 1
    stash[b] = 2
    assert stash[a] == 1 and stash[b] == 2


def test_get_or_create_makes_the_value_once():
    """get_or_create stores the factory's value the first time and returns it afterwards."""
    key: StashKey[list] = StashKey("items")
    stash = Stash()
    first = stash.get_or_create(key, list)
    first.append(1)
    assert stash.get_or_create(key, list) == [1]


def test_each_kernel_and_run_has_its_own_stash():
    """kernel.stash and ctx.stash are separate per kernel and per run; string keys still work."""
    key: StashKey[int] = StashKey("n")
    k1, k2 = zagent.Kernel(entry_points=False), zagent.Kernel(entry_points=False)
    k1.stash[key] = 1
    assert key not in k2.stash
    ctx1, ctx2 = k1.context(), k1.context()
    ctx1.stash[key] = 5
    ctx1.stash["plugin.name"] = "legacy"
    assert key not in ctx2.stash and ctx1.stash["plugin.name"] == "legacy"


class Counter:
    def __init__(self, n=0):
        self.n = n

    def to_state(self):
        return self.n


def test_a_persistent_key_saves_its_value_under_its_name():
    """to_state() gives persistent keys' and string keys' to_state() by name; plain keys are left out."""
    persistent = StashKey("my.count", restore=Counter)
    s = Stash()
    s[persistent] = Counter(3)
    s[StashKey("transient")] = Counter(9)
    s["legacy"] = Counter(5)
    s["plain"] = {"no": "to_state"}
    assert s.to_state() == {"my.count": 3, "legacy": 5}


def test_a_persistent_key_adopts_restored_state_on_first_use():
    """After restore(), get_or_create on the persistent key rebuilds its object from the saved data once."""
    key = StashKey("my.count", restore=Counter)
    s = Stash()
    s.restore({"my.count": 4})
    counter = s.get_or_create(key, Counter)
    assert counter.n == 4 and "my.count" not in s and s.get_or_create(key, Counter) is counter


def test_restore_keeps_values_already_there():
    """restore() never replaces a value the run already has under a name."""
    s = Stash(legacy="live")
    s.restore({"legacy": "saved", "other": 1})
    assert s["legacy"] == "live" and s["other"] == 1


def test_a_persistent_key_needs_a_name():
    """StashKey(restore=...) without a name is refused: its state could not be saved under anything."""
    with pytest.raises(ValueError, match="needs a name"):
        StashKey(restore=Counter)
