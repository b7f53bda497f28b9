"""The offline demo a newcomer sees: canned answers that are right for the shipped examples, and say so."""

import json
import os
import pathlib
import subprocess
import sys

import pytest
from hypothesis import given, strategies as st

from zagent import Kernel
from zagent.plugins.offline.grounded import OFFLINE_NOTE, fill_arguments
from zagent.types import LLMRequest, Message

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react"]


def _cli(*args, cwd=EXAMPLES, stdin=None, plugins="offline,parsers,actions,react,cli"):
    env = {k: v for k, v in os.environ.items() if k != "ZAGENT_MODEL"}
    return subprocess.run([sys.executable, "-m", "zagent.plugins.cli", *args], capture_output=True, text=True,
                          cwd=cwd, input=stdin, timeout=120,
                          env={**env, "ZAGENT_PLUGINS": plugins})


def test_the_calculator_example_adds():
    """`zagent run examples/calculator_agent.json --input question="What is 2+3?"` answers 5 offline."""
    proc = _cli("run", "calculator_agent.json", "--input", "question=What is 2+3?", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["result"] == 5


def test_offline_commands_print_no_model_warning():
    """Running an example offline prints no warning about ZAGENT_MODEL; the answer itself says it is canned."""
    proc = _cli("run", "qa_agent.json", "--input", "question=What is a language model?")
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr.lower()
    assert "predict the next word" in proc.stdout and OFFLINE_NOTE in proc.stdout


def test_an_offline_workflow_says_once_on_stderr_that_its_outputs_are_placeholders():
    """`zagent workflow run` with no ZAGENT_MODEL: its outputs are placeholders ("example report"), so stderr says
    once, at the first model call, that the offline test model answered and how to pick a real one."""
    proc = _cli("workflow", "run", "workflow_report.json", "--input", "topic=cats",
                plugins="offline,parsers,actions,react,manager,workflow,cli")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("the offline test model answers") == 1 and "ZAGENT_MODEL=provider:model" in proc.stderr
    assert proc.stderr.index("offline test model") < proc.stderr.index("+ outline: done")


def test_a_chosen_test_model_gets_no_offline_note():
    """With ZAGENT_MODEL set (to the test model itself), the user picked the model: no offline note."""
    env = {**os.environ, "ZAGENT_PLUGINS": "offline,parsers,actions,react,manager,workflow,cli",
           "ZAGENT_MODEL": "test:offline"}
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "workflow", "run", "workflow_report.json",
                           "--input", "topic=cats"], capture_output=True, text=True, cwd=EXAMPLES, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "offline test model" not in proc.stderr


def test_offline_chat_never_calls_ask_clarification():
    """An offline chat with tools answers from the tool's result, with no ask_clarification error in it."""
    proc = _cli("chat", "--tools", "example_tools:word_count",
                stdin="How many words are in 'to be or not to be'?\n")
    assert proc.returncode == 0, proc.stderr
    assert "ask_clarification" not in proc.stdout + proc.stderr
    assert "word_count: 6" in proc.stdout


def word_count(text: str) -> int:
    """Count words.

    Args:
        text: the text
    """
    return len(text.split())


def _counting_kernel():
    k = Kernel(PLUGINS, entry_points=False)
    k.add_tool(word_count)
    return k


def test_react_agent_offline_uses_the_quoted_text():
    """A ReAct agent's offline run passes the quoted text of the request to a text tool."""
    k = _counting_kernel()
    reply = k.agent({"type": "react", "name": "counter", "tools": ["word_count"]}).chat(
        "How many words are in 'to be or not to be'?", use_react=True)
    assert "word_count: 6" in reply.content
    k.close()


@given(st.lists(st.integers(-10**6, 10**6), min_size=1, max_size=4))
def test_numbers_of_the_message_fill_numeric_parameters_in_order(numbers):
    """Each integer parameter takes the next number of the user's message; other parameters keep their value."""
    schema = {"type": "object", "properties": {f"n{i}": {"type": "integer"} for i in range(len(numbers))}
              | {"label": {"type": "string", "enum": ["x"]}}}
    base = {f"n{i}": 1 for i in range(len(numbers))} | {"label": "x"}
    request = LLMRequest(model="x", messages=[Message.user("sum " + " and ".join(map(str, numbers)))])
    filled = fill_arguments(base, schema, request)
    assert [filled[f"n{i}"] for i in range(len(numbers))] == numbers and filled["label"] == "x"


def test_bounded_parameters_keep_their_valid_value():
    """A number the schema bounds is not taken from the message (it could break the bound)."""
    schema = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}}
    request = LLMRequest(model="x", messages=[Message.user("use 99")])
    assert fill_arguments({"n": 1}, schema, request) == {"n": 1}


def test_a_text_parameter_takes_a_message_word_shaped_like_its_described_examples():
    """A timezone parameter described with 'America/New_York' takes 'Europe/Oslo' from the message, else the example."""
    schema = {"type": "object", "properties": {"timezone": {
        "type": "string", "description": "IANA timezone name (e.g., 'America/New_York', 'Europe/London')."}}}
    asked = LLMRequest(model="x", messages=[Message.user("What time is it in Europe/Oslo?")])
    assert fill_arguments({"timezone": "a"}, schema, asked) == {"timezone": "Europe/Oslo"}
    plain = LLMRequest(model="x", messages=[Message.user("What time is it?")])
    assert fill_arguments({"timezone": "a"}, schema, plain) == {"timezone": "America/New_York"}


def test_a_known_question_gets_its_fixed_reply_even_after_a_tool_call():
    """The README's embedding example offers word_count for "What is a language model?": the offline answer
    is the fixed reply to that question, not the word count of a placeholder text."""
    k = _counting_kernel()
    agent = k.agent({"name": "Answerer", "prompt": "Answer in two sentences: {question}",
                     "inputs": [{"name": "question"}], "outputs": [{"name": "answer"}], "tools": ["word_count"]})
    answer = agent(question="What is a language model?").answer
    k.close()
    assert answer.startswith("A language model is a program") and answer.endswith(OFFLINE_NOTE)


def test_the_sum_workflow_explains_its_result_offline():
    """`zagent workflow run examples/workflow_sum.json` offline explains the result in a sentence, not with
    the placeholder "example explanation"."""
    proc = _cli("workflow", "run", "workflow_sum.json", "--input", "question=What is 2+3?",
                plugins="offline,parsers,actions,react,manager,workflow,cli")
    assert proc.returncode == 0, proc.stderr
    assert "example explanation" not in proc.stdout and OFFLINE_NOTE in proc.stdout


def test_piped_chat_prints_no_prompts_on_stdout():
    """`echo ... | zagent chat` prints the answers only: the "you> " prompt is for a terminal."""
    proc = _cli("chat", "--tools", "example_tools:add", stdin="What is 2+3?\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"chat> The tools returned add: 5. {OFFLINE_NOTE}\n"


BUILT_IN = "offline,openai,anthropic,ollama,parsers,actions,memory,react,rails,manager,workflow,groupchat,skills," \
           "batch,runlog,evals,fallback,cli"


@pytest.mark.parametrize("command", [
    ["agent", "show", "qa_agent.json", "--input", "question=x"], ["plugins"], ["tools"], ["models", "--no-check"],
    ["logs", "path"], ["workflow", "show", "workflow_sum.json"], ["skills", "list"]])
def test_a_command_that_calls_no_model_prints_nothing_on_stderr(command, tmp_path):
    """Commands that call no model say nothing about ZAGENT_MODEL (or anything else) on stderr, offline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZAGENT_", "OPENAI_", "ANTHROPIC_", "OLLAMA_"))}
    env.update(ZAGENT_PLUGINS=BUILT_IN, XDG_DATA_HOME=str(tmp_path), HOME=str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", *command], capture_output=True, text=True,
                          cwd=EXAMPLES, timeout=120, env=env)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
