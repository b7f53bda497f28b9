"""Kernel's public methods carry precise return types where the kernel owns the type (users' checkers see them)."""

import subprocess
import sys
import typing

from zagent import LLM, Kernel


def test_llm_is_annotated_to_return_an_llm():
    """``Kernel.llm``'s return annotation is ``zagent.LLM``, resolvable at run time (``get_type_hints``)."""
    assert typing.get_type_hints(Kernel.llm)["return"] is LLM


def test_llm_returns_an_llm_instance():
    """What ``Kernel.llm`` returns is an instance of the annotated type (the offline test model here)."""
    with Kernel(plugins=["zagent.plugins.offline"], entry_points=False) as k:
        assert isinstance(k.llm("test:offline"), LLM)


def test_tool_executor_is_annotated_tool_threads_without_importing_it():
    """``Kernel.tool_executor`` is annotated ``ToolThreads`` through a type-checking-only import, so
    ``import zagent`` still does not load ``zagent._tools.threads`` (nor asyncio)."""
    from zagent._tools.threads import ToolThreads

    hints = typing.get_type_hints(Kernel.tool_executor, localns={"ToolThreads": ToolThreads})
    assert hints["return"] is ToolThreads
    code = "import sys, zagent; print('zagent._tools.threads' in sys.modules, 'asyncio' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.split() == ["False", "False"]
