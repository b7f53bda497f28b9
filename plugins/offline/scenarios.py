"""Three small offline runs with known events, for testing observers (tracing, run logs): ``react_two_tools``,
``three_node_workflow`` and ``group_chat`` (docs/testing.md).

Each builds its agents on the kernel it is given, which needs the ``PLUGINS``, and runs once on the ``test:`` model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.memory", "zagent.plugins.manager", "zagent.plugins.workflow",
           "zagent.plugins.groupchat"]


def word_count(text: str) -> int:
    """Count the words of a text.

    Args:
        text: the text.
    """
    return len(text.split())


def shout(text: str) -> str:
    """Upper-case a text.

    Args:
        text: the text.
    """
    return text.upper()


def react_two_tools(kernel: "Kernel", model: str = "test:offline") -> Any:
    """One ReAct run whose first step calls two tools at once; returns the ``ReActResult``."""
    from zagent.plugins.react.loop import ReActLoop

    for fn in (word_count, shout):
        if kernel.find("tools", fn.__name__) is None:
            kernel.add_tool(fn)
    loop = ReActLoop(kernel=kernel, llm=kernel.llm(model), tools=["word_count", "shout"], agent="helper",
                     allow_clarification=False)
    return loop.run("How many words are in 'the quick brown fox'?")


def _agent(name: str, prompt: str, inputs: list[str], output: str) -> dict[str, Any]:
    return {"type": "customize", "name": name, "description": f"the {name}", "prompt": prompt,
            "inputs": [{"name": i} for i in inputs], "outputs": [{"name": output}], "parse_mode": "str"}


def three_node_workflow(kernel: "Kernel", model: str = "test:offline") -> Any:
    """``outline`` → (``left`` ∥ ``right``); returns the ``WorkFlowResult``."""
    from zagent.plugins.manager import AgentManager
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    graph = WorkFlowGraph.from_dict({
        "name": "report", "goal": "outline a topic, then write two parts in parallel",
        "inputs": [{"name": "topic"}],
        "nodes": [
            {"name": "outline", "inputs": [{"name": "topic"}], "outputs": [{"name": "outline"}],
             "agents": [_agent("Outliner", "Outline {topic}.", ["topic"], "outline")]},
            {"name": "left", "inputs": [{"name": "outline"}], "outputs": [{"name": "part_a"}],
             "agents": [_agent("LeftWriter", "Write part A of {outline}.", ["outline"], "part_a")]},
            {"name": "right", "inputs": [{"name": "outline"}], "outputs": [{"name": "part_b"}],
             "agents": [_agent("RightWriter", "Write part B of {outline}.", ["outline"], "part_b")]},
        ],
        "edges": [{"source": "outline", "target": "left"}, {"source": "outline", "target": "right"}],
    })
    manager = AgentManager(kernel=kernel)
    for node in graph.nodes:  # built here so they get ``model``, not the kernel's default
        for spec in node.agents:
            manager.add_agent(dict(spec), llm=model)
    return WorkFlowExecutor(kernel=kernel, manager=manager).run(graph, {"topic": "tides"})


def group_chat(kernel: "Kernel", model: str = "test:offline") -> Any:
    """Speakers A and B (one LLM call per turn), round robin, two rounds; returns the ``GroupChatResult``."""
    from zagent.plugins.groupchat import GroupChat

    agents = [_agent(n, f"You are {n}. Task: {{task}}\n{{transcript}}", ["task", "transcript"], "reply")
              for n in ("A", "B")]
    chat = GroupChat(kernel=kernel, agents=agents, llm=kernel.llm(model), selection={"policy": "round_robin"},
                     termination={"max_rounds": 2})
    return chat.run("Say hello")
