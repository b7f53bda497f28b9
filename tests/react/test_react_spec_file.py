"""React agent files choose the text tool format and a checkpoints file (issue 17, item 10)."""


import pytest

from zagent import ConfigError


def test_file_chooses_the_text_tool_format(kernel):
    """tool_format in a react spec is the format offered to a model without native tool calls."""
    seen = []

    def model(request):
        seen.append(request.messages[0].content)
        return "done"

    kernel.add_tool(lambda text: text, name="echo")
    llm = kernel.llm("scripted:text", replies=[model], profile={"native_tools": False})
    agent = kernel.agent({"type": "react", "name": "t", "tools": ["echo"], "tool_format": "hermes"})
    agent.llm = llm
    agent.chat("say hi", use_react=True)
    assert any("You are a function calling AI model" in s for s in seen)  # the hermes format's own section
    assert agent.loop().tool_format == "hermes"


def test_unknown_tool_format_is_refused(kernel):
    """A tool_format that no parser provides is a ConfigError listing the installed ones."""
    with pytest.raises(ConfigError) as info:
        kernel.agent({"type": "react", "name": "t", "tool_format": "smoke-signals"})
    assert "smoke-signals" in str(info.value) and "tool_call" in str(info.value)


def test_file_saves_its_runs_to_a_checkpoints_file(kernel, tmp_path):
    """checkpoints: PATH in a react spec checkpoints every chat run into that SQLite file."""
    db = tmp_path / "runs.db"
    kernel.add_tool(lambda text: text, name="echo")
    kernel.config["spec_paths"] = [str(tmp_path)]  # the app lets specs name files there
    agent = kernel.agent({"type": "react", "name": "t", "tools": ["echo"], "checkpoints": str(db)})
    agent.llm = kernel.llm("scripted:c", replies=[{"tool_calls": [{"name": "echo", "arguments": {"text": "a"}}]},
                                                   "the end"])
    agent.chat("echo a", use_react=True)
    runs = agent.checkpoints.list()
    assert db.exists() and len(runs) == 1


def test_untrusted_file_may_not_checkpoint_to_any_path(kernel, tmp_path):
    """An untrusted spec naming a checkpoints file that is not *.db/*.sqlite is refused."""
    with pytest.raises(ConfigError, match="checkpoints"):
        kernel.agent({"type": "react", "name": "t", "checkpoints": str(tmp_path / ".bashrc")})


def test_loop_rails_apply_when_the_caller_gives_its_own_context(kernel):
    """ReActLoop(agent_config={"rails": ...}).run(ctx=k.context()) still applies the loop's rails."""
    from zagent.plugins.react import ReActLoop

    kernel.add_plugin("zagent.plugins.rails")
    kernel.add_tool(lambda text: text, name="echo")
    llm = kernel.llm("scripted:r", replies=[{"tool_calls": [{"name": "echo", "arguments": {"text": "a"}}]}, "done"])
    loop = ReActLoop(kernel=kernel, llm=llm, tools=["echo"], agent_config={"rails": {"deny_tools": ["echo"]}})
    result = loop.run("echo a", ctx=kernel.context())
    assert [s.is_blocked for s in result.steps if s.tool] == [True]


def test_an_output_parser_named_as_tool_format_is_refused(kernel):
    """``tool_format: json`` names an output parser, which cannot write or read tool calls: ``ConfigError`` when
    the react agent is built, listing the tool-call formats."""
    with pytest.raises(ConfigError, match=r"tool_format 'json' is an output parser, not a tool-call format"):
        kernel.agent({"type": "react", "name": "t", "tools": ["add"], "tool_format": "json"})
