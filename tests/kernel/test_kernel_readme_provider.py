"""The README's example provider (``EchoLLM``), exactly as written there, passes ProviderTests (issue 17, item 18)."""

import pathlib
import re
import sys
import types

from zagent.testing.providers import ProviderTests

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def _readme_echo_module() -> types.ModuleType:
    """The README's ``zagent_echo.py`` block, executed as a module."""
    text = README.read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "class EchoLLM" in b)
    module = types.ModuleType("zagent_echo_readme")
    exec(compile(block, "README.md:zagent_echo.py", "exec"), module.__dict__)
    sys.modules[module.__name__] = module
    return module


class TestReadmeEchoProvider(ProviderTests):
    """Every rule of the provider conformance suite, run against the README's EchoLLM (no tool calling)."""

    plugins = [_readme_echo_module()]
    model = "echo:parrot-1"
    supports_tools = False
