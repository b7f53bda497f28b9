"""The manager and workflow plugins are cheap to import and register only what they need."""

import subprocess
import sys

from zagent import Kernel


def test_importing_the_plugins_loads_no_submodule():
    """Importing the plugin packages loads none of their modules (the kernel starts fast)."""
    code = ("import sys, zagent.plugins.workflow, zagent.plugins.manager; "
            "print(sorted(m for m in sys.modules if m.startswith(('zagent.plugins.workflow.', "
            "'zagent.plugins.manager.', 'zagent.plugins.actions'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_plugins_register_only_cli_commands():
    """workflow adds CLI commands; manager registers nothing."""
    k = Kernel(plugins=["zagent.plugins.manager", "zagent.plugins.workflow"], entry_points=False, strict=True)
    hooks = {p.name: p.hooks for p in k.plugins()}
    assert hooks["zagent.plugins.manager"] == ()
    assert hooks["zagent.plugins.workflow"] == ("zagent_register_commands",)
    k.close()
