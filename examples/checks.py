"""Guardrails and output validators used by ``guarded_agent.json`` (named by import path in the file).

An input guardrail sees the agent's inputs, an output guardrail its validated answer; each returns ``None``
to go on or a reason, which stops the run with ``zagent.GuardrailTripped``. An output validator raises
``ModelRetry(reason)``: the reason goes back to the model, which answers again (``max_output_retries``).
"""

from zagent.plugins.actions import ModelRetry


def no_passwords(inputs, ctx):
    """Input guardrail: refuse questions asking for a password."""
    if "password" in str(inputs.get("question", "")).lower():
        return "questions about passwords are not answered here"
    return None


def no_secrets(output, ctx):
    """Output guardrail: stop an answer that would leak something looking like a key."""
    if "sk-" in output.answer:
        return "the answer contains something that looks like an API key"
    return None


def short_answer(output):
    """Output validator: the answer must be a few sentences, not an essay."""
    if not output.answer.strip():
        raise ModelRetry("the answer is empty; answer the question")
    if len(output.answer) > 600:
        raise ModelRetry(f"the answer is {len(output.answer)} characters; keep it under 600")
