"""AgentManager: registration and reuse by name, storage, states and waiting under threads and asyncio."""

import asyncio
import threading
import time

import pytest
from zagent import ConfigError
from zagent.plugins.manager import AgentManager, AgentState, AgentTimeout

from .conftest import spec

GUARD = 10  # seconds: a deadlock guard only, never asserted on


class Plain:
    def __init__(self, name):
        self.name = name


def test_agent_from_a_dict_is_built_through_the_kernel(manager):
    """A spec dict becomes an agent of its registered type (customize here)."""
    agent = manager.add_agent(spec())
    assert type(agent).__name__ == "CustomizeAgent" and manager.get_agent("Writer") is agent


def test_second_add_of_a_name_reuses_the_agent(manager):
    """Adding a name that is already known returns the agent already there."""
    first = manager.add_agent(spec())
    assert manager.add_agent(spec(description="another")) is first
    assert manager.add_agent("Writer") is first
    assert manager.add_agent(Plain("Writer")) is first
    assert len(manager) == 1


def test_instance_is_kept_under_its_name(manager):
    """Any object with a name (or a function) can be registered."""
    obj = manager.add_agent(Plain("Tool"))

    def summarise(text):
        return {"summary": text[:10]}

    manager.add_agent(summarise)
    assert manager["Tool"] is obj and manager["summarise"] is summarise
    assert manager.names == ["Tool", "summarise"]


def test_unknown_name_without_storage_is_a_clear_error(manager):
    """A name nobody registered, with no storage to load from, says what to do."""
    with pytest.raises(ConfigError, match="unknown agent 'Ghost'.*storage"):
        manager.add_agent("Ghost")


def test_llm_is_given_to_agents_built_from_dicts(kernel, manager):
    """add_agent(dict, llm=...) sets that LLM on the new agent."""
    llm = kernel.llm("scripted:m", replies=["hello"])
    agent = manager.add_agent(spec(), llm=llm)
    assert agent.llm is llm and agent(topic="x").text == "hello"


def test_save_all_and_load_all_with_a_directory(kernel, manager, tmp_path):
    """save_all writes one JSON file per agent; load_all in a new manager rebuilds them."""
    manager.add_agent(spec("Writer"))
    manager.add_agent(spec("Editor", prompt="Edit {topic}"))
    manager.add_agent(Plain("NotSaveable"))
    assert manager.save_all(tmp_path) == ["Writer", "Editor"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Editor.json", "Writer.json"]
    other = AgentManager(kernel=kernel)
    other.load_all(tmp_path)
    assert other.names == ["Editor", "Writer"]
    assert other["Editor"].to_dict() == manager["Editor"].to_dict()


def test_save_all_and_load_all_with_sqlite(kernel, manager, tmp_path):
    """A path ending in .db stores the specs in the SQLite checkpoint store."""
    db = str(tmp_path / "agents.db")
    manager.add_agent(spec("Writer"))
    manager.save_all(db)
    other = AgentManager(kernel=kernel)
    [agent] = other.load_all(db)
    assert agent.name == "Writer" and agent.to_dict() == manager["Writer"].to_dict()


def test_name_is_loaded_from_storage(kernel, manager, tmp_path):
    """With storage set, add_agent('Name') loads the saved agent."""
    manager.add_agent(spec("Writer"))
    manager.save_all(tmp_path)
    other = AgentManager(kernel=kernel, storage=tmp_path)
    assert other.add_agent("Writer").to_dict() == manager["Writer"].to_dict()


def test_add_agents_from_workflow(kernel, manager):
    """Every agent named or specified by a workflow's nodes is registered."""
    from zagent.plugins.workflow import WorkFlowGraph

    manager.add_agent(Plain("Known"))
    graph = WorkFlowGraph.from_dict({"goal": "write something good", "nodes": [
        {"name": "a", "agents": ["Known"]}, {"name": "b", "agents": [spec("Writer")]}]})
    agents = manager.add_agents_from_workflow(graph)
    assert [a.name for a in agents] == ["Known", "Writer"] and manager.names == ["Known", "Writer"]


def test_new_agents_are_available(manager):
    """An agent starts AVAILABLE; acquire makes it RUNNING and release AVAILABLE again."""
    manager.add_agent(Plain("A"))
    assert manager.get_state("A") is AgentState.AVAILABLE
    with manager.using("A") as agent:
        assert agent.name == "A" and manager.get_state("A") is AgentState.RUNNING
    assert manager.get_state("A") is AgentState.AVAILABLE


def test_running_agent_cannot_be_removed(manager):
    """remove_agent refuses an agent that is running."""
    manager.add_agent(Plain("A"))
    manager.acquire("A")
    with pytest.raises(ConfigError, match="running"):
        manager.remove_agent("A")
    manager.release("A")
    manager.remove_agent("A")
    assert "A" not in manager


def test_waiting_in_a_thread_times_out(manager):
    """acquire on a busy agent raises AgentTimeout after the timeout; wait_for_available returns False."""
    manager.add_agent(Plain("A"))
    manager.acquire("A")
    with pytest.raises(AgentTimeout, match="'A'"):
        manager.acquire("A", timeout=0.01)
    assert manager.wait_for_available("A", timeout=0.01) is False


def test_thread_waiting_is_woken_by_release(manager):
    """A thread blocked in acquire gets the agent when another thread releases it."""
    manager.add_agent(Plain("A"))
    manager.acquire("A")
    got = []
    waiting = threading.Event()

    def worker():
        waiting.set()
        got.append(manager.acquire("A", timeout=GUARD))

    t = threading.Thread(target=worker)
    t.start()
    waiting.wait(GUARD)
    manager.release("A")
    t.join(GUARD)
    assert got and got[0].name == "A" and manager.get_state("A") is AgentState.RUNNING


def test_threads_take_turns(manager):
    """Many threads using one agent never run it twice at once."""
    manager.add_agent(Plain("A"))
    running, peak = [0], [0]
    lock = threading.Lock()

    def worker():
        for _ in range(20):
            with manager.using("A", timeout=GUARD):
                with lock:
                    running[0] += 1
                    peak[0] = max(peak[0], running[0])
                time.sleep(0.0002)  # hold the agent a moment: another thread that got in too would be counted
                with lock:
                    running[0] -= 1

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(GUARD)
    assert peak[0] == 1 and manager.get_state("A") is AgentState.AVAILABLE


def test_async_waiting_does_not_block_the_loop(manager):
    """A coroutine waiting for a busy agent lets other coroutines run, and gets the agent on release."""
    manager.add_agent(Plain("A"))

    async def main():
        manager.acquire("A")
        waiter = asyncio.ensure_future(manager.aacquire("A", timeout=GUARD))
        await asyncio.sleep(0)
        assert not waiter.done()  # the loop is free: we are running
        manager.release("A")
        return await waiter

    assert asyncio.run(main()).name == "A"


def test_async_waiting_times_out(manager):
    """aacquire raises AgentTimeout, await_available returns False, when the agent stays busy."""
    manager.add_agent(Plain("A"))
    manager.acquire("A")

    async def main():
        assert await manager.await_available("A", timeout=0.01) is False
        with pytest.raises(AgentTimeout):
            await manager.aacquire("A", timeout=0.01)

    asyncio.run(main())


def test_release_from_a_thread_wakes_a_coroutine(manager):
    """A coroutine on one loop is woken when a worker thread releases the agent."""
    manager.add_agent(Plain("A"))
    manager.acquire("A")

    async def main():
        waiter = asyncio.ensure_future(manager.aacquire("A", timeout=GUARD))
        await asyncio.sleep(0)
        threading.Thread(target=manager.release, args=("A",)).start()
        return await waiter

    assert asyncio.run(main()).name == "A"


def test_coroutines_on_two_loops_and_threads_share_one_agent(manager):
    """Threads and coroutines of two event loops using one agent never overlap."""
    manager.add_agent(Plain("A"))
    running, peak = [0], [0]
    lock = threading.Lock()

    uses = [0]

    def enter():
        with lock:
            uses[0] += 1
            running[0] += 1
            peak[0] = max(peak[0], running[0])

    def leave():
        with lock:
            running[0] -= 1

    async def coro_user():
        for _ in range(10):
            async with manager.ausing("A", timeout=GUARD):
                enter()
                await asyncio.sleep(0)
                leave()

    async def two_users():
        await asyncio.wait_for(asyncio.gather(coro_user(), coro_user()), GUARD)

    def loop_thread():
        asyncio.run(two_users())

    def thread_user():
        for _ in range(10):
            with manager.using("A", timeout=GUARD):
                enter()
                leave()

    threads = [threading.Thread(target=loop_thread) for _ in range(2)] + [threading.Thread(target=thread_user)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(GUARD)
    assert uses[0] == 50 and peak[0] == 1 and manager.get_state("A") is AgentState.AVAILABLE


def test_describe_lists_inputs_and_outputs(manager):
    """describe() gives name, description, inputs and outputs (what the agent generator shows the model)."""
    manager.add_agent(spec())
    assert manager.describe() == [{"name": "Writer", "description": "Writer writes", "inputs": ["topic"],
                                   "outputs": ["text"]}]


def test_name_is_loaded_from_an_sqlite_storage(kernel, manager, tmp_path):
    """With an SQLite storage, add_agent('Name') loads the saved spec from the store."""
    db = str(tmp_path / "agents.db")
    manager.add_agent(spec("Writer"))
    manager.save_all(db)
    other = AgentManager(kernel=kernel, storage=db)
    assert other.add_agent("Writer").to_dict() == manager["Writer"].to_dict()
    with pytest.raises(ConfigError, match="'Ghost' is not saved"):
        other.add_agent("Ghost")


def test_load_all_from_a_missing_directory_is_a_clear_error(manager, tmp_path):
    """load_all names a directory that does not exist."""
    with pytest.raises(ConfigError, match="does not exist"):
        manager.load_all(tmp_path / "nope")
