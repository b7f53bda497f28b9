"""``MiproPromptTemplate`` and ``MiproOptimizer``: instructions and demonstrations chosen by score.

EvoAgentX (000), 3.3: "MiproPromptTemplate → 兼容 dspy 优化" (MiproPromptTemplate: compatible with dspy
optimisation) and "few-shot 示例变成交替的 user/assistant 轮" (few-shot examples become alternating
user/assistant turns).
"""

import pytest

from zagent import ConfigError, Kernel
from zagent.plugins.actions.mipro import MiproOptimizer, MiproPromptTemplate

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions"]
TRAIN = [{"inputs": {"word": w}, "outputs": {"answer": w.upper() + "!"}} for w in ["cat", "dog", "owl", "bee"]]


@pytest.fixture
def k():
    kernel = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    yield kernel
    kernel.close()


def shouter(request):
    """An offline model that follows the shown examples: with a demonstration it answers in their style
    (upper case and "!"), without one it echoes the word; an instruction saying "shout" also works."""
    messages = request.messages
    word = messages[-1].content.split("\n", 1)[1]
    if len(messages) > 2 or "shout" in messages[0].content.lower():
        return f"## answer\n{word.upper()}!"
    return f"## answer\n{word}"


def test_demonstrations_become_user_and_assistant_turns():
    """000: "few-shot 示例变成交替的 user/assistant 轮，最后一条 user 装本次输入" (demonstrations become alternating
    user/assistant turns; the last user turn holds this call's inputs)."""
    t = MiproPromptTemplate(instruction="Shout the word.", demonstrations=TRAIN[:1], outputs=["answer"])
    messages = t.format({"word": "fox"})
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert "Shout the word." in messages[0].content and messages[2].content == "## answer\nCAT!"
    assert messages[-1].content == "## word\nfox"


def test_the_optimizer_picks_demonstrations_by_score(k):
    """000: "MiproPromptTemplate → 兼容 dspy 优化" (a template an optimizer fills): with only the given
    instruction, the optimizer keeps the demonstration set that scores best on the examples it does not show."""
    llm = k.llm("scripted:mipro-demos", replies=[shouter] * 100)
    result = MiproOptimizer(llm=llm, max_demos=1).optimize(
        MiproPromptTemplate(instruction="Repeat the word.", outputs=["answer"]), TRAIN)
    assert result.score == 1.0 and len(result.template.demonstrations) == 1
    assert [t.score for t in result.trials][0] == 0.0  # no demonstrations: echoes, scores nothing


def test_the_optimizer_picks_an_instruction_variant_by_score(k):
    """000: the optimizer fills the template's instruction: of two variants, the one scoring best wins,
    with no demonstrations needed (ties keep the fewer demonstrations)."""
    llm = k.llm("scripted:mipro-instr", replies=[shouter] * 100)
    result = MiproOptimizer(llm=llm, max_demos=1).optimize(
        MiproPromptTemplate(instruction="Repeat the word.", outputs=["answer"]), TRAIN,
        instructions=["Shout the word in capitals."])
    assert result.template.instruction == "Shout the word in capitals."
    assert result.template.demonstrations == [] and result.score == 1.0


def test_a_malformed_demonstration_is_refused():
    """000: demonstrations are examples of inputs and outputs: anything else is a ConfigError saying the shape."""
    with pytest.raises(ConfigError, match="inputs"):
        MiproPromptTemplate(instruction="x", demonstrations=[{"question": "q"}])


def test_an_optimized_template_drops_into_an_agent_spec(k):
    """000: the template "compatible with dspy optimisation" is a ChatTemplate: ``to_spec()`` is an agent's
    ``prompt_template`` (chat style), and the chosen demonstration reaches the model as a user/assistant turn."""
    llm = k.llm("scripted:mipro-agent", replies=[shouter] * 100 + ["## answer\nFOX!"])
    best = MiproOptimizer(llm=llm, max_demos=1).optimize(
        MiproPromptTemplate(instruction="Repeat the word.", outputs=["answer"]), TRAIN).template
    agent = k.agent({"name": "S", "prompt_template": best.to_spec(), "inputs": [{"name": "word"}],
                     "outputs": [{"name": "answer"}]})
    agent.llm = k.llm("scripted:mipro-run", replies=["## answer\nFOX!"])
    assert agent(word="fox").answer == "FOX!"
    sent = agent.llm.requests[0].messages
    demo = best.demonstrations[0]
    assert [m.role for m in sent[:3]] == ["system", "user", "assistant"] and demo["outputs"]["answer"] in sent[2].content
    assert MiproPromptTemplate.from_spec(best.to_spec()).demonstrations == best.demonstrations
