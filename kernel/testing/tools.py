"""Conformance suite for tool plugins (``zagent_register_tools``): subclass ``ToolPluginTests`` in a class named
``Test...`` and set ``plugins``, ``modules`` and ``sample_calls`` (``slow_calls`` optional). Its rules are listed
in docs/testing.md: schemas, descriptions, timeouts, calls through rails, a quiet import. Only zagent and pytest
are imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any, Sequence

import pytest

from .. import Deny, Kernel, RunContext, ToolCall, hookimpl


class _DenyAll:
    """A rail that denies every tool call and remembers which it saw."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def zagent_before_tool_call(self, call: ToolCall, ctx: RunContext[Any]) -> Deny:
        self.seen.append(call.name)
        return Deny("denied by the conformance suite")


_IMPORT_CHECK = textwrap.dedent("""
    import importlib, io, json, os, sys, threading
    before_threads = threading.active_count()
    before_files = sorted(os.listdir("."))
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err
    for name in json.loads(sys.argv[1]):
        importlib.import_module(name)
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    print(json.dumps({"threads": threading.active_count() - before_threads,
                      "files": sorted(set(os.listdir(".")) - set(before_files)),
                      "stdout": out.getvalue(), "stderr": err.getvalue()}))
""")


class ToolPluginTests:
    """Rules every tool plugin follows. Set ``plugins`` (and ``modules``, ``sample_calls``)."""

    plugins: Sequence[Any] = ()
    #: import paths imported in a clean interpreter to check for import-time side effects
    modules: Sequence[str] = ()
    #: tool name -> arguments of one call that succeeds
    sample_calls: dict[str, dict[str, Any]] = {}
    #: tool name -> (arguments, timeout in seconds) of a call that takes longer than that timeout
    slow_calls: dict[str, tuple[dict[str, Any], float]] = {}

    def make_kernel(self, *extra: Any) -> Kernel:
        return Kernel(plugins=[*self.plugins, *extra], entry_points=False)

    @pytest.fixture
    def kernel(self) -> Any:
        k = self.make_kernel()
        yield k
        k.close()

    def _tools(self, kernel: Kernel) -> list[Any]:
        return kernel.tools(available_only=False)

    # -- registration and schemas ----------------------------------------------------------

    def test_registers_tools_without_problems(self, kernel: Kernel) -> None:
        """The plugin loads without a plugin problem and registers at least one tool."""
        assert not kernel.problems, [p.error for p in kernel.problems]
        assert self._tools(kernel), "the plugin registered no tool"

    def test_schemas_are_json_schema_objects(self, kernel: Kernel) -> None:
        """Each schema is an object schema whose ``required`` names only declared properties, and encodes to JSON."""
        for tool in self._tools(kernel):
            params = tool.spec.parameters
            assert params.get("type") == "object", f"{tool.name}: parameters must be an object schema"
            props = params.get("properties", {})
            assert isinstance(props, dict), f"{tool.name}: properties must be a mapping"
            missing = set(params.get("required", [])) - set(props)
            assert not missing, f"{tool.name}: required names undeclared properties {sorted(missing)}"
            json.dumps(params)

    def test_schemas_are_stable_across_loads(self) -> None:
        """Two fresh kernels give every tool the same name, description and schema."""
        first, second = self.make_kernel(), self.make_kernel()
        try:
            def specs(k: Kernel) -> dict[str, str]:
                return {t.name: json.dumps([t.spec.description, t.spec.parameters], sort_keys=True)
                        for t in self._tools(k)}

            assert specs(first) == specs(second)
        finally:
            first.close()
            second.close()

    def test_tools_and_parameters_are_described(self, kernel: Kernel) -> None:
        """Every tool has a description and every parameter a description (from the docstring)."""
        for tool in self._tools(kernel):
            assert tool.spec.description.strip(), f"{tool.name}: no description (write a docstring)"
            for name, prop in tool.spec.parameters.get("properties", {}).items():
                assert str(prop.get("description", "")).strip(), (
                    f"{tool.name}: parameter {name!r} has no description (document it under Args:)")

    def test_timeouts_are_finite_or_inline(self, kernel: Kernel) -> None:
        """Every tool has a finite positive timeout, or runs inline."""
        for tool in self._tools(kernel):
            if getattr(tool, "inline", False):
                continue
            assert tool.timeout is not None and 0 < tool.timeout < float("inf"), (
                f"{tool.name}: timeout {tool.timeout!r}; give a finite number of seconds")

    # -- running --------------------------------------------------------------------------

    def test_sample_calls_succeed_through_the_kernel(self, kernel: Kernel) -> None:
        """Each sample call runs through the kernel's tool path and comes back ``success``."""
        if not self.sample_calls:
            pytest.skip("no sample_calls given")
        for name, arguments in self.sample_calls.items():
            result = kernel.run_tool({"name": name, "arguments": arguments})
            assert result.state == "success", f"{name}: {result.state}: {result.content}"

    def test_deny_rail_blocks_every_sample_call(self) -> None:
        """With a rail denying everything, each sample call is ``blocked`` and the rail saw it."""
        if not self.sample_calls:
            pytest.skip("no sample_calls given")
        rail = _DenyAll()
        k = self.make_kernel(rail)
        try:
            for name, arguments in self.sample_calls.items():
                result = k.run_tool({"name": name, "arguments": arguments})
                assert result.state == "blocked", f"{name}: {result.state}: {result.content}"
            assert sorted(rail.seen) == sorted(self.sample_calls)
        finally:
            k.close()

    def test_slow_calls_time_out(self, kernel: Kernel) -> None:
        """A call outlasting its timeout comes back as a ``timeout`` result instead of hanging the run."""
        if not self.slow_calls:
            pytest.skip("no slow_calls given")
        import attrs

        for name, (arguments, timeout) in self.slow_calls.items():
            tool = kernel.remove_tool(name)
            kernel.add_tool(attrs.evolve(tool, timeout=timeout))
            result = kernel.run_tool({"name": name, "arguments": arguments})
            assert result.state == "timeout", f"{name}: {result.state}: {result.content}"

    # -- import ---------------------------------------------------------------------------

    def test_import_has_no_side_effects(self, tmp_path: Any) -> None:
        """Importing the plugin modules in a clean interpreter prints nothing, starts no thread, writes no file."""
        if not self.modules:
            pytest.skip("no modules given")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([*sys.path, os.environ.get("PYTHONPATH", "")])}
        proc = subprocess.run([sys.executable, "-c", _IMPORT_CHECK, json.dumps(list(self.modules))],
                              capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        found = json.loads(proc.stdout.strip().splitlines()[-1])
        assert found["stdout"] == "" and found["stderr"] == "", f"import printed: {found}"
        assert found["threads"] == 0, f"import started {found['threads']} thread(s)"
        assert found["files"] == [], f"import wrote {found['files']}"
