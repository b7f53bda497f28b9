"""``k.agent(path, trust=True)`` finds an import-path tool in a module next to the spec file, as the CLI
does, whatever the working directory."""

import json
import sys
import uuid

from zagent import Kernel

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react"]


def test_a_trusted_spec_file_finds_its_tool_module_next_to_it(tmp_path, monkeypatch):
    """Seed 003 (tiny-agent): "你只需把工具函数写在tools/web_search.py里register_tool(...)即可启用 ... 真正的
    “插件即文件”" (write the tool function in a file beside the agent and it is enabled: plugins are files).
    A spec file naming ``module:function`` finds the module in its own folder through ``k.agent(path,
    trust=True)``, run from another working directory; the tool runs."""
    module = f"seedtools_{uuid.uuid4().hex[:8]}"
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / f"{module}.py").write_text("def triple(n: int) -> int:\n    \"\"\"Multiply by three.\"\"\"\n"
                                        "    return 3 * n\n")
    spec = {"name": "Tripler", "prompt": "Triple {n}", "inputs": [{"name": "n"}], "outputs": [{"name": "answer"}],
            "tools": [f"{module}:triple"]}
    (specs / "agent.json").write_text(json.dumps(spec))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    k = Kernel(plugins=PLUGINS, entry_points=False)
    try:
        agent = k.agent(str(specs / "agent.json"), trust=True)
        assert agent.action().tools == ["triple"]
        assert k.run_tool({"name": "triple", "arguments": {"n": 4}}).content == "12"
    finally:
        sys.modules.pop(module, None)
        k.close()
