"""Hold-out round four: what a hostile tool, a planted FIFO or a huge recording makes zagent read or send.

Attacks tried (session 2026-12-03, redteam2) and whether they got through before this module's fixes:

- a native tool returning 50 MB of text (or raising an exception whose message is 50 MB): GOT THROUGH (the
  whole text went into the next model request, on the user's key) -- fixed: ``zagent._tools.results`` cuts a
  result and an error message to ``MAX_RESULT_CHARS`` (200,000, as MCP results), saying how much was cut
- a FIFO named as the spec file (``zagent run evil.json``, ``k.agent("evil.json")``): GOT THROUGH (the load
  hung in ``open`` forever) -- fixed: ``load_spec_file`` opens without blocking and refuses non-regular files
- a spec's ``replay:`` recording that is a FIFO: GOT THROUGH (hung) -- fixed: ``open_private`` for reading
  refuses non-regular files the same way
- a ``replay:`` recording of 70 MB: GOT THROUGH (read whole into memory) -- fixed: ``MAX_RECORDING_BYTES``
  (64 MiB), a ``ConfigError`` saying to record a shorter run
"""

import json
import os

import pytest

from zagent.errors import ConfigError
from zagent.plugins.react import ReActLoop

from .conftest import make_kernel

BIG = 50 * 2**20


def run_with_tool(k, tool):
    k.add_tool(tool)
    llm = k.llm("scripted:big", replies=[
        {"tool_calls": [{"id": "c1", "name": tool.__name__, "arguments": {}}]}, "done"])
    ReActLoop(kernel=k, llm=llm, tools=[tool.__name__]).run("go")
    return llm.requests[1].messages[-1].content


def test_a_50mb_tool_result_is_cut_before_the_model_reads_it():
    """A native tool's 50 MB result reaches the next request as at most 200,000 characters and a note of the cut."""
    def flood() -> str:
        """Return a lot."""
        return "A" * BIG

    content = run_with_tool(make_kernel(), flood)
    assert len(content) <= 200_000
    assert f"{BIG - content.index(chr(10) + '[...')} more characters" in content


def test_a_50mb_json_tool_result_is_cut_too():
    """A dict result whose JSON is 50 MB is cut the same way."""
    def flood() -> dict:
        """Return a lot."""
        return {"rows": ["x" * 1000] * (BIG // 1000)}

    content = run_with_tool(make_kernel(), flood)
    assert len(content) < 201_000 and "cut" in content


def test_a_50mb_exception_message_is_cut():
    """A tool raising an exception with a 50 MB message: the error the model reads is bounded."""
    def flood() -> str:
        """Fail loudly."""
        raise ValueError("E" * BIG)

    content = run_with_tool(make_kernel(), flood)
    assert len(content) < 202_000 and "ValueError" in content


def test_a_huge_exception_message_is_masked_only_where_it_can_be_shown(monkeypatch):
    """A 5 MB exception message opening with the key of the environment: the key is masked, only the head that
    can be shown is masked at all (masking costs ~0.3 s per MB with a long key), and the note counts every
    character left out."""
    from zagent._tools.results import describe

    key = "sk-proj-" + "A1b2C3d4" * 20
    monkeypatch.setenv("OPENAI_API_KEY", key)
    text = describe(ValueError(key + "E" * 5_000_000))
    assert key not in text and key[:20] not in text
    total = len("ValueError: ") + len(key) + 5_000_000
    shown = text[:text.index("\n[... ")]
    assert f"[... {total - len(shown) - len(key) + 3} more characters" in text  # the key shows as ***


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_spec_file_is_refused_without_hanging(tmp_path):
    """``k.agent(path)`` of a FIFO: a ConfigError saying it is not a regular file, no hang in open()."""
    fifo = tmp_path / "evil.json"
    os.mkfifo(fifo)
    k = make_kernel()
    with pytest.raises(ConfigError, match="FIFO, not a regular file"):
        k.agent(str(fifo))


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to plant a foreign link")
def test_a_spec_file_that_is_another_users_symlink_is_not_followed(tmp_path):
    """``k.agent(path)`` of a symlink another user owns (planted in a shared folder): refused, never followed."""
    target = tmp_path / "real.json"
    target.write_text(json.dumps({"type": "customize", "name": "QA", "prompt": "{q}"}))
    link = tmp_path / "agent.json"
    os.symlink(target, link)
    os.lchown(link, 12345, 12345)
    with pytest.raises(ConfigError, match="symlink owned by another user"):
        make_kernel().agent(str(link))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_replay_recording_is_refused_without_hanging(tmp_path):
    """A spec's ``replay:`` recording that is a FIFO in the spec's folder: ConfigError, no hang."""
    os.mkfifo(tmp_path / "rec.jsonl")
    spec = {"type": "react", "name": "r", "llm_config": {"model": "replay:test:offline", "path": str(tmp_path / "rec.jsonl")}}
    (tmp_path / "r.json").write_text(json.dumps(spec))
    k = make_kernel()
    with pytest.raises(ConfigError, match="not a regular file"):
        agent = k.agent(str(tmp_path / "r.json"))
        agent.run("hi")


def test_a_huge_replay_recording_is_refused(tmp_path):
    """A 70 MB recording (sparse) is refused with a ConfigError naming the bound, never read whole."""
    from zagent.plugins.offline.record import load

    rec = tmp_path / "rec.jsonl"
    with open(rec, "wb") as f:
        f.truncate(70 * 2**20)
    with pytest.raises(ConfigError, match="larger than 64 MiB"):
        load(str(rec))


def test_a_result_cut_once_is_not_cut_again():
    """The kernel's cut keeps the whole text within ``MAX_RESULT_CHARS``, note included, so a result a tool
    source already cut (MCP's, with its own note) or a cut result cut again comes back unchanged."""
    from zagent._tools.results import MAX_RESULT_CHARS, cut

    once = cut("x" * (3 * MAX_RESULT_CHARS))
    assert len(once) <= MAX_RESULT_CHARS and "more characters of the tool's result cut" in once
    assert cut(once) == once
