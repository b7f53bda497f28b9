"""The protocols of ``zagent.contracts`` describe what the built-in plugins register: every member a protocol
names is there on each registered entry (async where the protocol's is async), and the typed look-ups
``Kernel.tool_format`` and ``Kernel.parser`` answer an unknown mode with a ``ConfigError`` naming the installed."""

from __future__ import annotations

import inspect

import pytest

from zagent import ConfigError, Kernel
from zagent.contracts import Checkpoints, Embedder, Executor, MemoryStore, OutputParser, TextToolFormat

OUTPUT_MODES = ("title", "json", "xml", "str", "custom")
TOOL_FORMATS = ("tool_call", "pipe", "pycall")


def _missing(obj: object, protocol: type) -> list[str]:
    """The members ``protocol`` declares that ``obj`` lacks, or has sync where the protocol's is async."""
    wrong = []
    for name, member in vars(protocol).items():
        if name.startswith("_"):
            continue
        if not hasattr(obj, name):
            wrong.append(name)
        elif inspect.iscoroutinefunction(member) and not inspect.iscoroutinefunction(getattr(obj, name)):
            wrong.append(f"{name} (not async)")
    return wrong


@pytest.fixture
def kernel():
    k = Kernel(plugins=["zagent.plugins.parsers", "zagent.plugins.memory"], entry_points=False)
    yield k
    k.close()


@pytest.mark.parametrize("mode", OUTPUT_MODES)
def test_builtin_output_parsers_keep_the_output_parser_contract(kernel, mode):
    """Each built-in output mode has every member of ``OutputParser``."""
    assert _missing(kernel.parser(mode), OutputParser) == []


@pytest.mark.parametrize("mode", TOOL_FORMATS)
def test_builtin_tool_formats_keep_the_text_tool_format_contract(kernel, mode):
    """Each built-in text tool-call format, looked up with ``tool_format``, has every member of
    ``TextToolFormat``."""
    assert _missing(kernel.tool_format(mode), TextToolFormat) == []


@pytest.mark.parametrize("name", ["inprocess", "sqlite"])
def test_builtin_memory_backends_keep_the_memory_store_contract(kernel, name, tmp_path):
    """The built-in message stores have every member of ``MemoryStore``."""
    options = {"path": str(tmp_path / "m.db")} if name == "sqlite" else {}
    assert _missing(kernel.memory(name, **options), MemoryStore) == []


def test_builtin_checkpoint_store_keeps_the_checkpoints_contract(kernel, tmp_path):
    """``k.memory("checkpoints")`` has every member of ``Checkpoints``."""
    assert _missing(kernel.memory("checkpoints", path=str(tmp_path / "c.db")), Checkpoints) == []


def test_local_executor_keeps_the_executor_contract(kernel):
    """``Kernel.executor()`` (the built-in ``local``) has every member of ``Executor``."""
    executor = kernel.executor()
    assert _missing(executor, Executor) == []
    assert executor.in_process is True


def test_a_registered_embedder_is_what_kernel_embedder_returns():
    """An embedder a plugin registers comes back from ``Kernel.embedder`` with the ``Embedder`` member."""

    class Hash:
        async def aembed(self, texts: list[str]) -> list[list[float]]:
            return [[float(len(t))] for t in texts]

    class Plugin:
        @staticmethod
        def zagent_register_embedders(register):
            register("hash", Hash)

    with Kernel(plugins=[Plugin], entry_points=False) as k:
        assert _missing(k.embedder(), Embedder) == []


def test_tool_format_of_an_unknown_mode_names_the_installed(kernel):
    """``Kernel.tool_format`` of a mode nobody registered is a ``ConfigError`` listing what is installed."""
    with pytest.raises(ConfigError, match=r"unknown parser 'nope'; installed: .*pycall"):
        kernel.tool_format("nope")


def test_the_contract_check_sees_a_missing_member():
    """The check these tests rely on finds a member an object lacks and a sync method the contract has async."""

    class Half:
        def aembed(self, texts):
            return []

    assert _missing(object(), Embedder) == ["aembed"]
    assert _missing(Half(), Embedder) == ["aembed (not async)"]
