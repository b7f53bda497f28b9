"""The sqlite backend's async twins keep SQLite work off the event loop's thread."""

import asyncio
import threading

from zagent import Message
from zagent.plugins.memory.database import Database


def test_async_methods_run_sqlite_work_in_a_worker_thread(kernel, db_path, monkeypatch):
    """aadd/alast/asearch/aclear do their SQLite reads and writes outside the loop thread."""
    mem = kernel.memory("sqlite", path=db_path)
    seen = []
    for name in ("read", "write"):
        real = getattr(Database, name)
        monkeypatch.setattr(Database, name, lambda self, fn, real=real: seen.append(threading.current_thread())
                            or real(self, fn))

    async def scenario():
        await mem.aadd("a/s", Message.user("off the loop"))
        await mem.alast("a/s", 1)
        await mem.asearch("a/s", "loop")
        await mem.aclear("a/s")
        return threading.current_thread()

    loop_thread = asyncio.run(scenario())
    assert len(seen) >= 4
    assert loop_thread not in seen


def test_concurrent_async_adds_all_land(kernel, db_path):
    """Many aadd calls gathered at once are all stored."""
    mem = kernel.memory("sqlite", path=db_path)

    async def scenario():
        await asyncio.gather(*(mem.aadd(f"a/{i % 4}", Message.user(f"m{i}")) for i in range(100)))
        return await mem.acount()

    assert asyncio.run(scenario()) == 100
