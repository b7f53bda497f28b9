"""The shipped rails plugin: allow/deny lists, argument size and per-run budgets, end to end
through ``Kernel.arun_tool`` (a blocked call becomes a ``blocked`` ToolResult)."""

from zagent import Kernel, Rewrite, ToolCall, run_sync, tool
from zagent.plugins.rails import BUDGET_KEY


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


@tool(toolset="files")
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


@tool(name="web.fetch")
def fetch(url: str) -> str:
    """Fetch a page."""
    return f"page {url}"


def make_kernel(*plugins, config=None):
    k = Kernel(plugins=["zagent.plugins.rails", *plugins], entry_points=False, strict=True, config=config)
    for t in (search, read_file, fetch):
        k.add_tool(t)
    return k


def run(k, name, ctx, **arguments):
    arguments = arguments or {"search": {"query": "q"}, "read_file": {"path": "a"},
                              "web.fetch": {"url": "u"}}[name]
    return run_sync(k.arun_tool(ToolCall(id=f"c-{name}", name=name, arguments=arguments), ctx))


def ctx_with(k, **rails):
    return k.context(agent="a", agent_config={"rails": rails})


def test_unconfigured_rails_allow_everything():
    """Without any rails settings every call runs as if the plugin were not loaded."""
    k = make_kernel()
    assert run(k, "search", k.context()).state == "success"


def test_deny_list_blocks_and_names_the_rule():
    """A tool matching ``deny_tools`` is blocked; the reason names the matching rule."""
    k = make_kernel()
    r = run(k, "web.fetch", ctx_with(k, deny_tools=["web.*"]))
    assert r.state == "blocked" and "deny_tools rule 'web.*'" in r.error and r.value is None


def test_allow_list_blocks_tools_it_does_not_name():
    """With ``allow_tools`` set, a tool matching none of its rules is blocked."""
    k = make_kernel()
    r = run(k, "search", ctx_with(k, allow_tools=["toolset:files"]))
    assert r.state == "blocked" and "allow_tools" in r.error


def test_allow_list_matches_toolset_patterns():
    """``toolset:NAME`` in ``allow_tools`` allows every tool of that toolset."""
    k = make_kernel()
    assert run(k, "read_file", ctx_with(k, allow_tools=["toolset:files"])).state == "success"


def test_empty_allow_list_blocks_everything():
    """``allow_tools: []`` allows no tool at all."""
    k = make_kernel()
    assert run(k, "search", ctx_with(k, allow_tools=[])).state == "blocked"


def test_deny_wins_over_allow():
    """A tool both allowed and denied is blocked."""
    k = make_kernel()
    r = run(k, "search", ctx_with(k, allow_tools=["*"], deny_tools=["search"]))
    assert r.state == "blocked" and "deny_tools rule 'search'" in r.error


def test_agent_settings_cannot_remove_a_kernel_deny():
    """An agent's ``deny_tools: []`` adds nothing and removes nothing: the kernel's deny still blocks."""
    k = make_kernel(config={"rails": {"deny_tools": ["search"]}})
    assert run(k, "search", k.context()).state == "blocked"
    assert run(k, "search", ctx_with(k, deny_tools=[])).state == "blocked"


def test_argument_size_limit_blocks_large_arguments():
    """Arguments longer than ``max_argument_bytes`` (JSON-encoded) are blocked with size and limit."""
    k = make_kernel()
    r = run(k, "search", ctx_with(k, max_argument_bytes=50), query="x" * 100)
    assert r.state == "blocked" and "max_argument_bytes" in r.error and "50" in r.error


def test_argument_size_limit_allows_small_arguments():
    """Arguments within ``max_argument_bytes`` run."""
    k = make_kernel()
    assert run(k, "search", ctx_with(k, max_argument_bytes=50), query="x").state == "success"


def test_budget_blocks_calls_past_the_limit():
    """``tool_budget`` allows that many calls of a tool per run, then blocks naming the rule."""
    k = make_kernel()
    ctx = ctx_with(k, tool_budget={"search": 2})
    states = [run(k, "search", ctx).state for _ in range(3)]
    assert states == ["success", "success", "blocked"]


def test_budget_is_per_run():
    """Two runs (contexts) never share budget counts."""
    k = make_kernel()
    first, second = ctx_with(k, tool_budget={"search": 1}), ctx_with(k, tool_budget={"search": 1})
    assert run(k, "search", first).state == "success"
    assert run(k, "search", second).state == "success"
    assert run(k, "search", first).state == "blocked"


def test_budget_star_is_the_default_per_tool():
    """The ``*`` budget applies to each tool without a more specific rule, counted per tool."""
    k = make_kernel()
    ctx = ctx_with(k, tool_budget={"search": 5, "*": 1})
    assert [run(k, n, ctx).state for n in ("read_file", "web.fetch", "read_file")] == ["success", "success", "blocked"]
    r = run(k, "read_file", ctx)
    assert "tool_budget rule '*'" in r.error


def test_budget_counts_concurrent_calls_exactly():
    """A batch of parallel calls in one run never exceeds the budget."""
    k = make_kernel()
    ctx = ctx_with(k, tool_budget={"search": 3})
    calls = [ToolCall(id=f"c{i}", name="search", arguments={"query": str(i)}) for i in range(10)]
    results = run_sync(k.arun_tools(calls, ctx))
    assert sum(r.state == "success" for r in results) == 3
    assert ctx.stash[BUDGET_KEY].counts == {"search": 3}


class Shortener:
    """Another rail: rewrites long queries to short ones."""

    def zagent_before_tool_call(self, call, ctx):
        if call.name == "search" and len(call.arguments["query"]) > 10:
            return Rewrite({"query": call.arguments["query"][:5]})
        return None


def test_size_limit_sees_arguments_rewritten_by_another_rail():
    """The shipped rails run last, so a rewrite by another rail composes: the size check sees the new arguments."""
    k = make_kernel(Shortener())
    r = run(k, "search", ctx_with(k, max_argument_bytes=30), query="x" * 100)
    assert r.state == "success" and r.content == "results for xxxxx"


def test_rail_that_raises_fails_closed():
    """Broken rails settings make the rail raise, and the call is blocked with the rail named."""
    k = make_kernel()
    r = run(k, "search", ctx_with(k, tool_budget=["search"]))
    assert r.state == "blocked" and "zagent.plugins.rails" in r.error and "TypeError" in r.error
