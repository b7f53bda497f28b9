"""A template zagent plugin: the ``shout`` provider and the ``reverse`` tool.

Copy this folder, rename the module, and replace the two pieces with yours.
"""

from __future__ import annotations

from zagent import LLM, Completion, LLMRequest, Message, Usage


class ShoutLLM(LLM):
    """Answers with the last user message in capitals (a stand-in for a real model API)."""

    async def _acomplete(self, request: LLMRequest) -> Completion:
        text = (request.messages[-1].content or "").upper() or "..."
        return Completion(message=Message(role="assistant", content=text), finish_reason="stop",
                          usage=Usage(input_tokens=len(request.messages), output_tokens=1), model=self.model)


def zagent_register_providers(register):
    register("shout", lambda model, **options: ShoutLLM(provider="shout", model=model))


def reverse(text: str) -> str:
    """Reverse a text.

    Args:
        text: the text to reverse
    """
    return text[::-1]


def zagent_register_tools(register):
    register(reverse, toolset="example", timeout=5)
