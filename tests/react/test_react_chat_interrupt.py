"""`zagent chat`: Ctrl-C during a run pauses it and offers resume or abort (a real process and signal)."""

import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

PLUGIN = '''
import os
import time

def zagent_register_tools(register):
    def wait_a_bit(note: str = "") -> str:
        """Take a moment."""
        release = os.environ.get("CHAT_TEST_RELEASE", "")
        for _ in range(6000):  # until the test releases it (at most a minute), so load cannot end it early
            if os.path.exists(release):
                break
            time.sleep(0.01)
        return "waited"
    register(wait_a_bit)
'''


@pytest.fixture
def plugin_path(tmp_path):
    """A throwaway plugin installed as a dist-info folder on PYTHONPATH (found like any entry point)."""
    (tmp_path / "chat_slow_tool.py").write_text(textwrap.dedent(PLUGIN))
    meta = tmp_path / "chat_slow_tool-0.1.dist-info"
    meta.mkdir()
    (meta / "entry_points.txt").write_text("[zagent]\nslowtool = chat_slow_tool\n")
    (meta / "METADATA").write_text("Name: chat-slow-tool\nVersion: 0.1\n")
    return str(tmp_path)


def _sigint_default():
    """In the child: SIGINT back to its default, as at a terminal.

    A runner that starts the tests as a background job hands children SIGINT
    ignored, and Python keeps an inherited ignore, so Ctrl-C would never arrive.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run_chat(plugin_path, answer):
    """Start a chat, Ctrl-C it while its tool runs, answer the pause prompt, then let the tool finish."""
    release = os.path.join(plugin_path, "release")
    env = {**os.environ, "PYTHONPATH": plugin_path, "ZAGENT_MODEL": "test:offline", "CHAT_TEST_RELEASE": release,
           "ZAGENT_PLUGINS": "offline,parsers,actions,react,rails,cli,slowtool"}
    proc = subprocess.Popen([sys.executable, "-m", "zagent.plugins.cli", "chat", "--tools", "wait_a_bit"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_sigint_default)
    started, prompted = threading.Event(), threading.Event()
    err: list[str] = []
    out: list[str] = []

    def read_err():
        for line in proc.stderr:
            err.append(line)
            if "→ wait_a_bit" in line:
                started.set()

    def read_out():  # char by char: the pause prompt ends without a newline
        while ch := proc.stdout.read(1):
            out.append(ch)
            if ch == "?" and "".join(out).endswith("paused: [r]esume or [a]bort?"):
                prompted.set()

    readers = [threading.Thread(target=f, daemon=True) for f in (read_err, read_out)]
    for r in readers:
        r.start()
    try:
        proc.stdin.write("please wait\n")
        proc.stdin.flush()
        assert started.wait(60), "".join(err)
        proc.send_signal(signal.SIGINT)
        assert prompted.wait(60), "".join(out) + "".join(err)
        proc.stdin.write(answer + "\n")
        proc.stdin.close()  # end of input after the answer: the REPL quits
    finally:
        open(release, "w").close()  # the tool finishes (a cancelled call's thread too)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    for r in readers:
        r.join(10)
    return proc.returncode, "".join(out), "".join(err)


def test_ctrl_c_pauses_and_resume_finishes_the_run(plugin_path):
    """Ctrl-C mid-tool pauses; answering 'r' resumes and the run ends with the agent's answer."""
    code, out, err = _run_chat(plugin_path, "r")
    assert code == 0, err
    assert "paused: [r]esume or [a]bort?" in out
    assert "← wait_a_bit: success" in err
    assert "chat> " in out.split("paused:", 1)[1]


def test_ctrl_c_then_abort_ends_the_run(plugin_path):
    """Ctrl-C mid-tool then 'a' aborts the run and the REPL goes on (and quits at end of input)."""
    code, out, err = _run_chat(plugin_path, "a")
    assert code == 0, err
    assert "(aborted)" in err
    assert "chat> " not in out.split("paused:", 1)[1]


def test_banner_says_when_ctrl_c_cannot_arrive(plugin_path):
    """A chat started with SIGINT ignored says Ctrl-C is ignored instead of promising a pause."""
    env = {**os.environ, "PYTHONPATH": plugin_path, "ZAGENT_MODEL": "test:offline",
           "ZAGENT_PLUGINS": "offline,parsers,actions,react,rails,cli,slowtool"}
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "chat", "--tools", "wait_a_bit"],
                          input="", capture_output=True, text=True, env=env, timeout=60,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert proc.returncode == 0, proc.stderr
    assert "Ctrl-C is ignored in this process" in proc.stderr
    assert "Ctrl-C pauses a run" not in proc.stderr


class _FakeLoop:
    """Records what the chat asked of the run."""

    def __init__(self):
        self.calls = []

    def pause(self):
        self.calls.append("pause")

    def resume(self):
        self.calls.append("resume")

    def abort(self):
        self.calls.append("abort")


def test_ctrl_c_while_the_run_is_scheduled_is_held_then_pauses(monkeypatch):
    """A Ctrl-C landing inside the scheduling of a run is neither lost nor escapes: it pauses the run."""
    import asyncio

    from zagent.plugins.react import cli

    interrupts, loop = cli._Interrupts(), _FakeLoop()
    real_submit = asyncio.run_coroutine_threadsafe

    def submit_with_signal(coro, ev_loop):
        future = real_submit(coro, ev_loop)
        interrupts(signal.SIGINT, None)  # the signal arrives after the run is scheduled, before its future is known
        return future

    async def run():
        return "answer"

    monkeypatch.setattr(asyncio, "run_coroutine_threadsafe", submit_with_signal)
    monkeypatch.setattr("builtins.input", lambda prompt="": "r")
    assert cli._run(loop, run(), interrupts) == "answer"
    assert loop.calls == ["pause", "resume"]
    assert interrupts.pending is False


def test_ctrl_c_outside_scheduling_raises_keyboard_interrupt():
    """Outside the scheduling window the chat's handler behaves like Python's: KeyboardInterrupt."""
    from zagent.plugins.react import cli

    with pytest.raises(KeyboardInterrupt):
        cli._Interrupts()(signal.SIGINT, None)


def test_a_sigint_landing_on_another_thread_still_interrupts_the_wait():
    """SIGINT delivered to a non-main thread (the kernel may pick any) reaches the chat's wait promptly."""
    import concurrent.futures
    import time

    from zagent.plugins.react import cli

    future = concurrent.futures.Future()

    def interrupt_from_here():
        time.sleep(0.3)  # let the main thread settle into the wait (not an assertion on time)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        time.sleep(10)  # a wait that only returned when the run ended would end here, without the interrupt
        future.set_result("the run ended")

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt_from_here, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            cli._result(future)
        assert not future.done(), "the interrupt must arrive while the run is still going"
    finally:
        signal.signal(signal.SIGINT, previous)
