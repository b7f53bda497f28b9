"""``Stash``/``StashKey``: typed per-kernel and per-run plugin state (issue 18, item 3)."""

import zagent
from zagent.stash import Stash, StashKey


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
