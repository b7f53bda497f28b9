"""TaskPlanner, build_from_plan, AgentGenerator, WorkFlowReviewer and WorkFlowGenerator with scripted replies."""

import copy

import pytest
from zagent import ConfigError
from zagent.plugins.manager import AgentManager
from zagent.plugins.workflow import (
    AgentGenerator,
    GenerationError,
    TaskPlanner,
    WorkFlowError,
    WorkFlowExecutor,
    WorkFlowGenerator,
    WorkFlowGraph,
    WorkFlowReviewer,
    build_from_plan,
)
from zagent.plugins.workflow.planner import parse_plan

from . import replies
from .replies import APPROVED, PLAN, fenced, plan_reply, router


def scripted(kernel, *answers):
    return kernel.llm("scripted:gen", replies=list(answers))


def prompts_of(llm):
    return [r.messages[-1].content for r in llm.requests]


# -- planner -------------------------------------------------------------------------------


def test_planner_parses_a_fenced_plan_with_prose(kernel):
    """A realistic reply (prose around fenced JSON) becomes a Plan with typed fields."""
    llm = scripted(kernel, plan_reply())
    plan = TaskPlanner(kernel=kernel, llm=llm).plan("Write a short report on solar power")
    assert [t.name for t in plan.sub_tasks] == ["research", "outline", "write_intro", "write_body", "assemble"]
    assert plan.sub_tasks[0].inputs[0].name == "goal" and plan.sub_tasks[-1].outputs[0].name == "report"
    prompt = prompts_of(llm)[0]
    assert "Write a short report on solar power" in prompt and "The first sub-task takes exactly one input: goal" in prompt


def test_planner_prompt_carries_history_and_suggestion(kernel):
    """An earlier plan and a suggestion appear under their own titles in the prompt."""
    llm = scripted(kernel, plan_reply(), plan_reply())
    planner = TaskPlanner(kernel=kernel, llm=llm)
    first = planner.plan("Write a short report on solar power")
    planner.plan("Write a short report on solar power", history=first, suggestion="merge the two writing steps")
    prompt = prompts_of(llm)[1]
    assert "## Previous plan" in prompt and '"write_intro"' in prompt
    assert "## Change the plan as follows\nmerge the two writing steps" in prompt


def test_inputs_given_as_plain_names_are_accepted():
    """Sub-task inputs/outputs written as plain names are read as fields."""
    plan = parse_plan("a goal of some length", [
        {"name": "a", "inputs": ["goal"], "outputs": ["x"]}, {"name": "b", "inputs": "x", "outputs": "y"}])
    assert [f.name for f in plan.sub_tasks[1].inputs] == ["x"]


@pytest.mark.parametrize("change, message", [
    (lambda p: p["sub_tasks"][0].update(inputs=[{"name": "facts"}]), "must take only 'goal'"),
    (lambda p: p["sub_tasks"][2].update(inputs=[{"name": "summary"}]), "takes summary, which neither"),
    (lambda p: p["sub_tasks"][3].update(outputs=[{"name": "intro"}]), "'intro' of 'write_body' is already produced by 'write_intro'"),
    (lambda p: p["sub_tasks"][1].update(name="research"), "name 'research' is used twice"),
    (lambda p: p["sub_tasks"].clear(), "no sub-tasks"),
])
def test_plan_breaking_a_rule_is_a_generation_error(change, message):
    """Each planning rule broken is named in a GenerationError (retried by the generator)."""
    plan = copy.deepcopy(PLAN)
    change(plan)
    with pytest.raises(GenerationError, match=message):
        parse_plan("Write a short report on solar power", plan["sub_tasks"])


def test_build_from_plan_links_outputs_to_inputs():
    """Edges lead from the producer of each value to every sub-task taking it; the graph validates."""
    graph = build_from_plan(parse_plan("Write a short report on solar power", PLAN["sub_tasks"]))
    pairs = {(e.source, e.target) for e in graph.edges}
    assert pairs == {("research", "outline"), ("research", "write_body"), ("outline", "write_intro"),
                     ("outline", "write_body"), ("write_intro", "assemble"), ("write_body", "assemble")}
    assert graph.initial_nodes() == ["research"]


# -- agent generator -------------------------------------------------------------------------


def research_node():
    graph = build_from_plan(parse_plan("Write a short report on solar power", PLAN["sub_tasks"]))
    return graph.node("research")


def test_generator_selects_an_existing_agent(kernel):
    """Selecting an existing agent by name returns that name; the manager's agent is the one used."""
    manager = AgentManager(kernel=kernel)
    manager.add_agent({"name": "Researcher", "prompt": "Find facts on {goal}", "inputs": [{"name": "goal"}],
                       "outputs": [{"name": "facts"}], "parse_mode": "str"})
    llm = scripted(kernel, fenced({"selected_agents": ["Researcher"], "generated_agents": []}, "Researcher fits."))
    refs = AgentGenerator(kernel=kernel, llm=llm, manager=manager).generate("solar report", research_node())
    assert refs == ["Researcher"]
    assert "- Researcher: (no description) (inputs: goal; outputs: facts)" in prompts_of(llm)[0]


def test_selecting_an_unknown_agent_is_rejected(kernel):
    """A selected name the manager does not know is a GenerationError listing the known ones."""
    llm = scripted(kernel, fenced({"selected_agents": ["Ghost"]}))
    with pytest.raises(GenerationError, match="'Ghost' for 'research' does not exist"):
        AgentGenerator(kernel=kernel, llm=llm).generate("solar report", research_node())


def test_selecting_an_agent_lacking_an_output_is_rejected(kernel):
    """A selected agent must produce the node's outputs."""
    manager = AgentManager(kernel=kernel)
    manager.add_agent({"name": "Poet", "prompt": "Poem on {goal}", "inputs": [{"name": "goal"}],
                       "outputs": [{"name": "poem"}], "parse_mode": "str"})
    llm = scripted(kernel, fenced({"selected_agents": ["Poet"]}))
    with pytest.raises(GenerationError, match="does not produce facts"):
        AgentGenerator(kernel=kernel, llm=llm, manager=manager).generate("solar report", research_node())


def test_generated_spec_is_repaired(kernel):
    """Near-miss placeholders are renamed (and <input>-tagged), unused inputs appended, output headings matched
    to the outputs."""
    raw = {"name": "Fact Finder", "description": "Finds facts", "inputs": [{"name": "goals"}],
           "outputs": [{"name": "fact list", "description": "the facts"}],
           "prompt": "Research {goals} thoroughly.\n\n## Fact List\nOne fact per line.", "tool_names": []}
    llm = scripted(kernel, fenced({"generated_agents": [raw]}))
    [spec] = AgentGenerator(kernel=kernel, llm=llm).generate("solar report", research_node())
    assert spec["name"] == "Fact_Finder"
    assert spec["prompt"] == "Research <input>{goal}</input> thoroughly.\n\n## facts\nOne fact per line."
    assert [f["name"] for f in spec["outputs"]] == ["facts"] and spec["outputs"][0]["description"]
    assert kernel.agent(spec).name == "Fact_Finder"


def test_unused_input_is_appended_to_the_prompt(kernel):
    """An input the generated prompt never mentions is added as 'name: {name}'."""
    node = build_from_plan(parse_plan("Write a short report on solar power", PLAN["sub_tasks"])).node("write_body")
    raw = {"name": "BodyWriter", "prompt": "Write the body following {outline}.", "outputs": [{"name": "body"}]}
    llm = scripted(kernel, fenced({"generated_agents": [raw]}))
    [spec] = AgentGenerator(kernel=kernel, llm=llm).generate("solar report", node)
    assert spec["prompt"].endswith("following <input>{outline}</input>.\n\nfacts: <input>{facts}</input>")


def test_unknown_tools_are_rejected(kernel):
    """A generated agent naming a tool that is not registered is a GenerationError naming it."""
    raw = {"name": "Searcher", "prompt": "Search {goal}", "tool_names": ["web_search"]}
    llm = scripted(kernel, fenced({"generated_agents": [raw]}))
    with pytest.raises(GenerationError, match="unknown tool\\(s\\) web_search"):
        AgentGenerator(kernel=kernel, llm=llm).generate("solar report", research_node())


def test_registered_tools_may_be_used(kernel):
    """Registered tools the app gives are listed in the prompt and accepted in a generated spec."""
    def web_search(query: str) -> str:
        """Search the web."""
        return query

    kernel.add_tool(web_search)
    raw = {"name": "Searcher", "prompt": "Search {goal}", "tool_names": ["web_search"]}
    llm = scripted(kernel, fenced({"generated_agents": [raw]}))
    [spec] = AgentGenerator(kernel=kernel, llm=llm, tools=kernel.names("tools")).generate("solar report",
                                                                                          research_node())
    assert spec["tools"] == ["web_search"] and "- web_search: Search the web." in prompts_of(llm)[0]


# -- reviewer --------------------------------------------------------------------------------


def test_reviewer_returns_suggestions(kernel):
    """The reviewer reads the goal and the diagram and returns its suggestions."""
    reply = fenced({"approved": False, "suggestions": ["Merge write_intro into write_body", "Add a fact check"]},
                   "The workflow mostly works, but:")
    llm = scripted(kernel, reply)
    graph = build_from_plan(parse_plan("Write a short report on solar power", PLAN["sub_tasks"]))
    assert WorkFlowReviewer(kernel=kernel, llm=llm).review(graph) == [
        "Merge write_intro into write_body", "Add a fact check"]
    assert "[write_body] Write the body from outline and facts" in prompts_of(llm)[0]


def test_reviewer_approval_means_no_suggestions(kernel):
    """An approved workflow gives no suggestions."""
    graph = build_from_plan(parse_plan("Write a short report on solar power", PLAN["sub_tasks"]))
    assert WorkFlowReviewer(kernel=kernel, llm=scripted(kernel, APPROVED)).review(graph) == []


# -- generator -------------------------------------------------------------------------------


def test_short_goal_is_rejected(kernel):
    """Goals shorter than 10 characters are refused with a message saying why."""
    with pytest.raises(ConfigError, match="too short.*at least 10 characters"):
        WorkFlowGenerator(kernel=kernel, llm=scripted(kernel)).generate("  tetris ")


def test_plan_is_retried_with_backoff_and_the_error(kernel, events):
    """A plan breaking the rules is asked again, after exponential backoff, telling the planner what was wrong."""
    bad = copy.deepcopy(PLAN)
    bad["sub_tasks"][0]["inputs"] = [{"name": "facts"}]
    llm = scripted(kernel, fenced(bad), fenced(bad), plan_reply())
    gen = WorkFlowGenerator(kernel=kernel, llm=llm, num_turns=0, backoff_base=0.001)
    graph = gen.generate("Write a short report on solar power", generate_agents=False)
    assert len(graph.nodes) == 5
    assert [e["delay"] for e in events.of("generation_retry")] == [0.001, 0.002]
    assert "Your previous answer was rejected" in prompts_of(llm)[1] and "must take only 'goal'" in prompts_of(llm)[1]


def test_retries_are_bounded(kernel):
    """After max_retries more failures the generator gives up naming the step and the last error."""
    bad = copy.deepcopy(PLAN)
    bad["sub_tasks"][0]["inputs"] = [{"name": "facts"}]
    llm = scripted(kernel, *[fenced(bad)] * 3)
    gen = WorkFlowGenerator(kernel=kernel, llm=llm, num_turns=0, max_retries=2, backoff_base=0)
    with pytest.raises(WorkFlowError, match="step 'plan' failed after 3 attempt"):
        gen.generate("Write a short report on solar power")
    assert llm.remaining == 0


def test_reviewer_suggestions_refine_the_plan(kernel):
    """Suggestions from the reviewer are fed back with the previous plan; the refined plan is used."""
    smaller = {"sub_tasks": [PLAN["sub_tasks"][0], {
        "name": "write_report", "description": "Write the report", "inputs": [{"name": "facts"}],
        "outputs": [{"name": "report"}]}]}
    review = fenced({"approved": False, "suggestions": ["Use one writing step"]})
    llm = scripted(kernel, plan_reply(), review, fenced(smaller), APPROVED)
    gen = WorkFlowGenerator(kernel=kernel, llm=llm, num_turns=3, backoff_base=0)
    graph = gen.generate("Write a short report on solar power", generate_agents=False)
    assert graph.node_names == ["research", "write_report"]
    third = prompts_of(llm)[2]
    assert "- Use one writing step" in third and '"write_body"' in third
    assert llm.remaining == 0  # approved on the second review: no third round


def test_generated_agents_get_unique_names(kernel):
    """Two nodes whose generated agents share a name get distinct names, so each node runs its own."""
    llm = scripted(kernel, plan_reply(), *[fenced({"generated_agents": [
        {"name": "Worker", "prompt": "Do it: " + " ".join("{%s}" % i for i in replies.INPUTS_OF[t])}]})
        for t in replies.INPUTS_OF])
    graph = WorkFlowGenerator(kernel=kernel, llm=llm, num_turns=0).generate("Write a short report on solar power")
    names = [n.agents[0]["name"] for n in graph.nodes]
    assert names == ["Worker", "Worker2", "Worker3", "Worker4", "Worker5"]


def test_existing_agent_is_reused_when_selected(kernel):
    """A node for which the generator selected a manager agent runs that very instance."""
    manager = AgentManager(kernel=kernel)
    researcher = manager.add_agent({"name": "Researcher", "prompt": "TASK research. goal=<<{goal}>>",
                                    "inputs": [{"name": "goal"}], "outputs": [{"name": "facts"}]})
    base = router()

    def reply(request):
        prompt = request.messages[-1].content
        role = "\n".join(m.content or "" for m in request.messages)  # the system section is the system message
        if "You are an agent designer" in role and '"name": "research"' in prompt:
            return fenced({"selected_agents": ["Researcher"]})
        return base(request)

    llm = kernel.llm("scripted:reuse", replies=[reply] * 20)
    researcher.llm = llm
    graph = WorkFlowGenerator(kernel=kernel, llm=llm, manager=manager, num_turns=0).generate(
        "Write a short report on solar power")
    assert graph.node("research").agents == ["Researcher"]
    WorkFlowExecutor(kernel=kernel, manager=manager, llm=llm).run(graph, {"goal": "solar power"})
    assert len(researcher.messages) == 2  # the manager's instance ran (inputs + result in its memory)


def test_end_to_end_generate_validate_run(kernel, tmp_path):
    """Acceptance: a goal becomes a 5-node workflow that validates, saves, loads, runs, and passes values along edges."""
    llm = kernel.llm("scripted:e2e", replies=[router()] * 20)
    graph = WorkFlowGenerator(kernel=kernel, llm=llm, num_turns=1).generate("Write a short report on solar power")
    assert len(graph.nodes) >= 4 and graph.problems() == []
    path = tmp_path / "wf.json"
    graph.save(path)
    loaded = WorkFlowGraph.load(path)
    result = WorkFlowExecutor(kernel=kernel, llm=llm).run(loaded, {"goal": "solar power"})
    facts = "research[goal=solar power]"
    outline = f"outline[goal=solar power, facts={facts}]"
    intro = f"write_intro[outline={outline}]"
    body = f"write_body[outline={outline}, facts={facts}]"
    assert result.outputs == {"report": f"assemble[intro={intro}, body={body}]"}
    assert [t.node for t in result.trace if t.status == "done"][0] == "research"


def test_plan_building_an_invalid_graph_is_replanned(kernel, events):
    """A plan that follows the rules but builds an invalid graph (unlinked steps) is re-planned with the problems."""
    unlinked = {"sub_tasks": [
        {"name": "a", "inputs": ["goal"], "outputs": ["x"]}, {"name": "b", "inputs": ["goal"], "outputs": ["y"]}]}
    llm = scripted(kernel, fenced(unlinked), plan_reply())
    gen = WorkFlowGenerator(kernel=kernel, llm=llm, num_turns=0, backoff_base=0)
    graph = gen.generate("Write a short report on solar power", generate_agents=False)
    assert len(graph.nodes) == 5
    assert "node 'a' has no edges" in prompts_of(llm)[1]
    assert events.of("generation_retry")[0]["step"] == "plan"
