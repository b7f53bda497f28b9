"""The ``zagent.testing`` pytest plugin: fixtures and the hook recorder, as plugin authors use them."""

import subprocess
import sys
import textwrap
import types

import pytest

from zagent import Kernel, tool
from zagent.testing import HookRecorder


def echo_plugin():
    mod = types.ModuleType("echo_plugin")

    def zagent_register_tools(register):
        register(lambda text: text, name="echo")

    mod.zagent_register_tools = zagent_register_tools
    return mod


@pytest.fixture
def zagent_plugins():
    """Overriding ``zagent_plugins`` chooses what ``zagent_kernel`` loads."""
    return [echo_plugin()]


def test_zagent_kernel_loads_the_overridden_plugins(zagent_kernel):
    """``zagent_kernel`` is a fresh kernel with ``zagent_plugins`` and nothing installed."""
    assert [p.name for p in zagent_kernel.plugins()] == ["echo_plugin"]


def test_make_kernel_gives_fresh_strict_kernels(make_kernel):
    """``make_kernel`` gives a new strict kernel per call."""
    a, b = make_kernel(), make_kernel()
    assert a is not b and a.strict and b.plugins() == []


def test_recorder_fixture_records_events(zagent_kernel, zagent_recorder):
    """``zagent_recorder`` records hook calls on ``zagent_kernel``."""
    zagent_kernel.run_tool({"name": "echo", "arguments": {"text": "hi"}})
    assert [e.type for e in zagent_recorder.events()] == ["tool_start", "tool_end"]


def test_recorder_assert_called_reports_what_it_saw():
    """A failed ``assert_called`` lists the calls that were seen."""
    k = Kernel(entry_points=False)
    k.add_tool(tool(lambda: 1, name="one"))
    rec = HookRecorder(k)
    k.run_tool({"name": "one", "arguments": {}})
    with pytest.raises(AssertionError, match="calls seen"):
        rec.assert_called("zagent_before_tool_call", call=lambda c: c.name == "two")


def test_recorder_records_registration_of_added_plugins():
    """Registration hooks of plugins added after the recorder are recorded too."""
    k = Kernel(entry_points=False)
    rec = HookRecorder(k)
    k.add_plugin(echo_plugin())
    call = rec.assert_called("zagent_register_tools")
    assert call.plugin == "echo_plugin"


def test_recorder_finish_removes_spy():
    """``finish_recording`` unregisters the spy, leaving the kernel as it was."""
    k = Kernel(entry_points=False)
    rec = HookRecorder(k)
    assert k.hooks.active("zagent_event")
    rec.finish_recording()
    assert not k.hooks.active("zagent_event") and k.plugins() == []


def test_recorder_assert_not_called():
    """``assert_not_called`` passes when the hook was not called, fails when it was."""
    k = Kernel(entry_points=False)
    k.add_tool(tool(lambda: 1, name="one"))
    rec = HookRecorder(k)
    rec.assert_not_called("zagent_before_tool_call")
    k.run_tool({"name": "one", "arguments": {}})
    with pytest.raises(AssertionError):
        rec.assert_not_called("zagent_before_tool_call")


def test_third_party_suite_uses_the_fixtures(tmp_path):
    """A third party's test suite gets the fixtures from the installed pytest plugin, no conftest needed."""
    (tmp_path / "test_theirs.py").write_text(textwrap.dedent('''
        import pytest, types

        @pytest.fixture
        def zagent_plugins():
            mod = types.ModuleType("theirs")
            mod.zagent_register_tools = lambda register: register(lambda: "ok", name="theirs_tool")
            return [mod]

        def test_it(zagent_kernel, zagent_recorder):
            assert zagent_kernel.run_tool({"name": "theirs_tool", "arguments": {}}).content == "ok"
            zagent_recorder.assert_called("zagent_after_tool_call", result=lambda r: r.content == "ok")
    '''))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_import_of_testing_kit_is_light():
    """Importing ``zagent.testing`` (done by every pytest run) imports no asyncio, httpx or recorder."""
    code = ("import sys, zagent.testing; "
            "print(sorted(m for m in ('asyncio', 'httpx', 'zagent.testing.recorder') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_recorder_sees_awaited_result_of_async_rails():
    """For an ``async`` rail, the recorder gets the awaited answer, not a coroutine."""
    from zagent import Deny

    class AsyncRail:
        async def zagent_before_tool_call(self, call):
            return Deny("later")
    k = Kernel([AsyncRail()], entry_points=False)
    k.add_tool(tool(lambda: 1, name="one"))
    rec = HookRecorder(k, spy=False)
    k.run_tool({"name": "one", "arguments": {}})
    assert rec.getcalls("zagent_before_tool_call")[0].result == Deny("later")


def test_recorder_sees_exceptions_as_results():
    """When an implementation raises, the recorder gets the exception as the result."""
    class Broken:
        def zagent_event(self, event):
            raise RuntimeError("observer bug")
    k = Kernel([Broken()], entry_points=False)
    rec = HookRecorder(k, spy=False)
    k.emit("ping")
    assert isinstance(rec.getcalls("zagent_event")[0].result, RuntimeError)
