"""Agent behaviour: memory, context extraction, llm/llm_config, sync twins, results."""

import asyncio
import threading

import pytest

from zagent import ConfigError

from .conftest import qa_spec


def test_result_is_recorded_in_memory_with_metadata(kernel):
    """execute writes the inputs and a result message (agent, action, prompt, usage) to memory."""
    agent = kernel.agent(qa_spec())
    agent.llm = kernel.llm("scripted:m", replies=["yes"])
    result = agent(question="q?")
    inputs, reply = agent.messages
    assert inputs.metadata["kind"] == "inputs" and '"question":"q?"' in inputs.content
    assert reply is result.message
    meta = reply.metadata
    assert (meta["agent"], meta["action"]) == ("QA", "QA")
    assert "Answer: q?" in meta["prompt"] and meta["usage"]["calls"] == 1


def test_memory_size_keeps_last_n(kernel):
    """Short-term memory keeps only the last memory_size messages."""
    agent = kernel.agent(qa_spec(memory_size=3))
    agent.llm = kernel.llm("scripted:m", replies=["a", "b", "c"])
    for _ in range(3):
        agent(question="q")
    assert len(agent.messages) == 3
    assert agent.messages[-1].content == '{"answer":"c"}'


def test_clear_memory_really_clears(kernel):
    """clear_memory empties short-term memory."""
    agent = kernel.agent(qa_spec())
    agent.llm = kernel.llm("scripted:m", replies=["a"])
    agent(question="q")
    agent.clear_memory()
    assert agent.messages == []


def test_missing_input_is_extracted_from_recent_messages(kernel):
    """A missing required input is extracted from the agent's recent messages."""
    llm = kernel.llm("scripted:m", replies=['{"question": "What is 2+3?"}', "5"])
    agent = kernel.agent(qa_spec())
    agent.llm = llm
    result = agent.execute(msgs=[{"role": "user", "content": "Please work out: What is 2+3?"}])
    assert result.answer == "5"
    assert "Please work out" in llm.requests[0].messages[-1].content
    assert "Answer: What is 2+3?" in llm.requests[1].messages[-1].content


def test_input_not_found_in_context_is_a_clear_error(kernel):
    """When extraction finds nothing, the error names the missing input instead of inventing one."""
    agent = kernel.agent(qa_spec())
    agent.llm = kernel.llm("scripted:m", replies=['{"question": null}'])
    with pytest.raises(ConfigError, match="question"):
        agent.execute(inputs={})


def test_llm_and_llm_config_disagreeing_is_an_error(kernel):
    """Giving llm and llm_config with different models is an error."""
    with pytest.raises(ConfigError, match="disagree"):
        kernel.agent(qa_spec(llm="scripted:a", llm_config={"model": "scripted:b"}))


def test_llm_config_derived_from_llm(kernel):
    """An llm string derives llm_config (and the other way round)."""
    agent = kernel.agent(qa_spec(llm="test:x"))
    assert agent.llm_config == {"model": "test:x"}
    other = kernel.agent(qa_spec(llm_config={"model": "test:y"}))
    assert other.llm.name == "test:y"


def test_acall_inside_running_loop(kernel):
    """acall works in async code, and the sync call works inside a running loop too."""
    agent = kernel.agent(qa_spec())
    agent.llm = kernel.llm("scripted:m", replies=["one", "two"])

    async def main():
        first = await agent.acall(question="q")
        second = agent(question="q")  # sync twin from inside a running loop
        return first.answer, second.answer

    assert asyncio.run(main()) == ("one", "two")


def test_sync_call_from_threads(kernel):
    """The sync call works from several worker threads at once."""
    agent = kernel.agent(qa_spec())
    agent.llm = kernel.llm("scripted:m", replies=[f"r{i}" for i in range(8)])
    answers = []

    def worker():
        answers.append(agent(question="q").answer)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(answers) == sorted(f"r{i}" for i in range(8))


def test_concurrent_calls_keep_state_per_call(kernel):
    """Concurrent acalls on one agent each get their own trajectory."""
    agent = kernel.agent(qa_spec(tools=["add"]))
    agent.llm = kernel.llm("test:offline")

    async def main():
        return await asyncio.gather(*(agent.acall(question=f"q{i}") for i in range(20)))

    results = asyncio.run(main())
    for i, r in enumerate(results):
        assert f"Answer: q{i}" in r.trajectory[0].content
        assert len(r.tool_results) == 1


def test_unknown_output_field_attribute_error(kernel):
    """Reading a field the output does not have says so."""
    agent = kernel.agent(qa_spec())
    agent.llm = kernel.llm("scripted:m", replies=["x"])
    with pytest.raises(AttributeError, match="nope"):
        agent(question="q").nope


def test_agent_config_reaches_the_run_context(kernel):
    """A declared agent's agent_config section is what rails and other plugins see in ctx.agent_config."""
    seen = []

    class Spy:  # reads the two settings, so they are not refused as read by nothing
        def zagent_config_keys(self):
            return ("skills", "rails")

        def zagent_before_llm_call(self, request, ctx):
            seen.append(ctx.agent_config)

    kernel.add_plugin(Spy())
    # trusted: an untrusted spec may not turn skills on (the user's data) unless the app's config does
    agent = kernel.agent(qa_spec(agent_config={"skills": True, "rails": {"deny_tools": ["add"]}}), trust=True)
    agent.llm = kernel.llm("scripted:m", replies=["x"])
    agent(question="q")
    assert seen == [{"skills": True, "rails": {"deny_tools": ["add"]}}]


def test_llm_config_options_not_applicable_to_an_instance_are_reported(kernel, caplog):
    """Options in llm_config cannot change a given LLM instance; a warning names them instead of dropping them quietly."""
    from zagent.plugins.actions import CustomizeAgent

    llm = kernel.llm("scripted:m", replies=["x"])
    with caplog.at_level("WARNING", logger="zagent"):
        CustomizeAgent.from_dict(qa_spec(llm_config={"model": "scripted:m", "temperature": 0}), kernel, llm=llm)
    assert "temperature" in caplog.text and "not applied" in caplog.text


def test_acall_goes_through_a_subclass_aexecute(kernel):
    """An Agent subclass overriding ``aexecute`` sees ``acall`` go through it (acall's shortcut to the run
    is taken only when aexecute is the base one)."""
    import asyncio

    from zagent.plugins.actions import CustomizeAgent

    seen = []

    class Traced(CustomizeAgent):
        async def aexecute(self, action_name=None, **kw):
            seen.append(kw.get("inputs"))
            return await super().aexecute(action_name, **kw)

    agent = Traced.from_dict({"type": "customize", "name": "T", "prompt": "Answer: {question}",
                              "inputs": [{"name": "question", "type": "string"}],
                              "outputs": [{"name": "answer", "type": "string"}], "parse_mode": "str",
                              "llm": "test:model"}, kernel)
    result = asyncio.run(agent.acall(question="hi"))
    assert seen == [{"question": "hi"}] and result.output.answer
