"""Typed dependencies (issue 32, item 9): ``RunContext[Deps]``, ``ctx.deps`` reaching tools and nested runs."""

from dataclasses import dataclass

from zagent import Kernel, RunContext

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react"]


@dataclass
class Deps:
    db: dict

    def __repr__(self):
        return "<Deps with a secret handle>"


def lookup(key: str, ctx: RunContext[Deps]) -> str:
    """Look a key up in the app's database."""
    return ctx.deps.db[key]


def _kernel():
    k = Kernel(plugins=PLUGINS, entry_points=False)
    k.add_tool(lookup)
    return k


CALL = {"tool_calls": [{"name": "lookup", "arguments": {"key": "ann"}}]}


def test_a_tool_typed_runcontext_deps_gets_the_contexts_deps_and_hides_the_parameter():
    """A tool with ctx: RunContext[Deps] receives ctx.deps; the parameter is not in the model's schema."""
    k = _kernel()
    assert "ctx" not in k.registries["tools"].get("lookup").parameters["properties"]
    result = k.run_tool({"name": "lookup", "arguments": {"key": "ann"}}, k.context(deps=Deps({"ann": "Ann Lee"})))
    assert result.content == "Ann Lee"
    k.close()


def test_kernel_agent_deps_reach_a_react_agents_tools():
    """Kernel.agent(spec, deps=obj): the agent's tools read obj as ctx.deps."""
    k = _kernel()
    agent = k.agent({"type": "react", "name": "desk", "tools": ["lookup"]}, deps=Deps({"ann": "Ann Lee"}))
    agent.llm = k.llm("scripted:d", replies=[CALL, "done"])
    agent.chat("who is ann?", use_react=True)
    assert [m.content for m in agent.llm.requests[1].messages if m.role == "tool"] == ["Ann Lee"]
    k.close()


def test_deps_reach_an_agent_called_as_a_tool():
    """A caller's deps carry into an agent it calls as a tool (a nested run), whose own tools read them."""
    k = _kernel()
    inner = k.agent({"type": "react", "name": "inner", "description": "looks up", "tools": ["lookup"]})
    inner.llm = k.llm("scripted:inner", replies=[CALL, "Ann Lee it is"])
    inner.as_tool("ask_inner")
    outer = k.agent({"type": "react", "name": "outer", "tools": ["ask_inner"]}, deps=Deps({"ann": "Ann Lee"}))
    ask = {"tool_calls": [{"name": "ask_inner", "arguments": {"task": "who is ann?"}}]}
    outer.llm = k.llm("scripted:outer", replies=[ask, "done"])
    outer.chat("who is ann?", use_react=True)
    assert [m.content for m in inner.llm.requests[1].messages if m.role == "tool"] == ["Ann Lee"]
    k.close()


def test_deps_are_not_in_events_or_the_contexts_repr():
    """Deps are app objects: no event of the run and no repr of its context shows them."""
    events = []

    class Spy:
        def zagent_event(self, event):
            events.append(repr(event))

    k = _kernel()
    k.add_plugin(Spy())
    ctx = k.context(deps=Deps({"ann": "Ann Lee"}))
    k.run_tool({"name": "lookup", "arguments": {"key": "ann"}}, ctx)
    assert events and not any("secret handle" in e or "Ann Lee" in e for e in events)
    assert "secret" not in repr(ctx)
    k.close()
