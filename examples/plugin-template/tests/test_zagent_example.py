"""The template plugin passes zagent's conformance kits for providers and tool plugins."""

from zagent.testing.providers import ProviderTests
from zagent.testing.tools import ToolPluginTests


class TestShoutProvider(ProviderTests):
    plugins = ["zagent_example"]
    model = "shout:loud"
    supports_tools = False


class TestExampleTools(ToolPluginTests):
    plugins = ["zagent_example"]
    modules = ["zagent_example"]
    sample_calls = {"reverse": {"text": "abc"}}


def test_the_entry_point_finds_the_plugin():
    """Installed, a plain Kernel() offers the tool and the provider (the `zagent` entry point)."""
    import zagent

    k = zagent.Kernel()
    try:
        assert k.run_tool({"name": "reverse", "arguments": {"text": "abc"}}).content == "cba"
        assert k.llm("shout:loud").complete("hi").text == "HI"
    finally:
        k.close()
