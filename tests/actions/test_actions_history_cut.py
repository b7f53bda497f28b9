"""crewai's history cut: the last N messages are kept, each cut to at most M characters."""

from zagent import Kernel, Message

SEED = ('Seed 003 (crewai SimpleMemory.add): "保留最近5轮交互每轮最多200字符 ... if len(self._messages) > 10 ... '
        'if len(msg.get("content", "")) > 200: msg["content"] = msg["content"][:197] + "..."')

POET = {"name": "Poet", "prompt": "Write about {topic}", "inputs": [{"name": "topic"}],
        "outputs": [{"name": "poem"}], "memory_size": 10, "memory_chars": 200}


def test_an_agent_keeps_ten_messages_of_at_most_200_characters(kernel):
    """Seed 003 (crewai SimpleMemory.add): "保留最近5轮交互每轮最多200字符" / "msg["content"][:197] + "..."" (keep
    the last 5 rounds, at most 200 characters each: longer ones cut to 197 plus "..."). With
    ``memory_size: 10, memory_chars: 200`` an agent's short-term memory holds the last 10 messages, every
    one at most 200 characters, a long one cut to its first 197 and "..."; the next chat sends that history."""
    agent = kernel.agent(dict(POET))
    long_reply = "x" * 500
    agent.llm = kernel.llm("scripted:cut", replies=[long_reply] * 8)
    for i in range(8):
        agent.chat(f"turn {i} " + "y" * 300)
    kept = agent.messages
    assert len(kept) == 10 and all(len(m.content) <= 200 for m in kept)
    assert kept[-1].content == "x" * 197 + "..."
    assert kept[-2].content == ("turn 7 " + "y" * 300)[:197] + "..."
    sent = agent.llm.requests[-1].messages
    assert len(sent[1:-1]) == 10 and all(len(m.content) <= 200 for m in sent[1:-1])  # the history, before the new turn


def test_short_messages_are_kept_whole(kernel):
    """Seed 003 (crewai): "对content字段做智能截断" (cut only the content that is too long): a message of at
    most ``memory_chars`` characters is kept as it is."""
    agent = kernel.agent(dict(POET))
    agent.llm = kernel.llm("scripted:short", replies=["short"])
    agent.chat("hello")
    assert [m.content for m in agent.messages] == ["hello", "short"]


def test_in_process_memory_cuts_long_messages():
    """Seed 003 (crewai SimpleMemory): "保留最近5轮交互每轮最多200字符" (the last rounds, at most 200
    characters each): ``k.memory("inprocess", max_messages=10, max_chars=200)`` keeps the last 10 messages,
    each cut to 197 characters and "..." when longer than 200."""
    k = Kernel(plugins=["zagent.plugins.memory"], entry_points=False)
    mem = k.memory("inprocess", max_messages=10, max_chars=200)
    mem.add("chat", [Message(role="user", content=f"{i} " + "z" * 400) for i in range(12)])
    last = mem.last("chat", 20)
    assert len(last) == 10 and last[0].content == ("2 " + "z" * 400)[:197] + "..."
    assert all(len(m.content) <= 200 for m in last)
