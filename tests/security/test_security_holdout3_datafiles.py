"""Hold-out round five: data files zagent reads that are not spec files (eval reports and cases, batch inputs
and results, run state, trajectories, MCP configuration).

Attacks tried (session 2026-12-04, sec2) and whether they got through before this module's fixes:

- an eval report (``EvalReport.load``, ``zagent eval --compare``) that is a FIFO: GOT THROUGH (hung in open)
- an eval report of 70 MB (sparse): GOT THROUGH (read whole into memory)
- an eval report that is a symlink another user planted: GOT THROUGH (followed)
- a FIFO as the eval cases file, the batch inputs file, the batch results file, a run state file, a trajectory
  file or an MCP configuration file: GOT THROUGH (each hung in open)
- a batch results file of one 70 MB line: GOT THROUGH (read whole)

Fixed in one place: ``zagent.agentkit.files.open_regular`` (through ``open_private(reading=True)``: opened without
blocking, non-regular files and foreign symlinks refused) and ``read_bounded`` (at most ``MAX_DATA_BYTES``,
64 MiB) for files read whole; JSONL files (batch results, trajectories) are read a line at a time with
``bounded_lines`` (16 MiB a line).
"""

import os

import pytest

from zagent.errors import ConfigError

from .conftest import make_kernel

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def sparse(path, size=70 * 2**20):
    with open(path, "wb") as f:
        f.write(b'{"agent": "a", "cases": [')
        f.truncate(size)
    return path


@needs_fifo
def test_a_fifo_eval_report_is_refused_without_hanging(tmp_path):
    """``EvalReport.load`` of a FIFO: a ConfigError saying it is not a regular file, no hang."""
    from zagent.plugins.evals import EvalReport

    os.mkfifo(tmp_path / "report.json")
    with pytest.raises(ConfigError, match="not a regular file"):
        EvalReport.load(tmp_path / "report.json")


def test_a_huge_eval_report_is_refused(tmp_path):
    """``EvalReport.load`` of a 70 MB (sparse) file: a ConfigError naming the bound, not read whole."""
    from zagent.plugins.evals import EvalReport

    with pytest.raises(ConfigError, match="larger than 64 MiB"):
        EvalReport.load(sparse(tmp_path / "report.json"))


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to plant a foreign link")
def test_a_foreign_symlink_eval_report_is_not_followed(tmp_path):
    """A report path that is a symlink owned by another user: refused, never followed."""
    from zagent.plugins.evals import EvalReport

    target = tmp_path / "real.json"
    target.write_text('{"agent": "a", "cases": []}')
    link = tmp_path / "report.json"
    os.symlink(target, link)
    os.lchown(link, 12345, 12345)
    os.chown(tmp_path, 0, 0)
    with pytest.raises(ConfigError, match="symlink owned by another user"):
        EvalReport.load(link)


@needs_fifo
def test_a_fifo_eval_cases_file_is_refused_without_hanging(tmp_path):
    """``read_cases`` of a FIFO: a ConfigError, no hang."""
    from zagent.plugins.evals import read_cases

    os.mkfifo(tmp_path / "cases.jsonl")
    with pytest.raises(ConfigError, match="not a regular file"):
        read_cases(str(tmp_path / "cases.jsonl"))


@needs_fifo
def test_a_fifo_batch_inputs_file_is_refused_without_hanging(tmp_path):
    """``read_items`` of a FIFO inputs file: a ConfigError, no hang."""
    from zagent.plugins.batch.files import read_items

    os.mkfifo(tmp_path / "in.jsonl")
    with pytest.raises(ConfigError, match="not a regular file"):
        list(read_items(tmp_path / "in.jsonl"))


@needs_fifo
def test_a_fifo_batch_results_file_is_refused_without_hanging(tmp_path):
    """A batch results file that is a FIFO: a ConfigError, no hang."""
    from zagent.plugins.batch.files import ResultsFile

    os.mkfifo(tmp_path / "out.jsonl")
    with pytest.raises(ConfigError, match="not a regular file"):
        ResultsFile(str(tmp_path / "out.jsonl"))


def test_a_batch_results_file_of_one_endless_line_is_refused(tmp_path):
    """A 70 MB (sparse) batch results file of one line to resume: a ConfigError naming the line bound, not read
    whole (a results file is read a line at a time, so a big batch's own file still resumes)."""
    from zagent.plugins.batch.files import ResultsFile

    with pytest.raises(ConfigError, match="longer than 16 MiB"):
        ResultsFile(str(sparse(tmp_path / "out.jsonl")))


@needs_fifo
def test_a_fifo_run_state_file_is_refused_without_hanging(tmp_path):
    """Restoring a ReAct run from a state file that is a FIFO: a ConfigError, no hang."""
    from zagent.plugins.react import ReActLoop

    os.mkfifo(tmp_path / "state.json")
    k = make_kernel()
    with pytest.raises(ConfigError, match="not a regular file"):
        ReActLoop.restore(k, str(tmp_path / "state.json"), llm=k.llm("scripted:x", replies=["done"]))


@needs_fifo
def test_a_fifo_trajectory_file_is_refused_without_hanging(tmp_path):
    """``read_trajectories`` of a FIFO: a ConfigError, no hang."""
    from zagent.plugins.react.trajectory import read_trajectories

    os.mkfifo(tmp_path / "t.jsonl")
    with pytest.raises(ConfigError, match="not a regular file"):
        list(read_trajectories(str(tmp_path / "t.jsonl")))


@needs_fifo
def test_a_fifo_live_trajectory_file_is_refused_without_hanging(tmp_path):
    """``read_live`` of a FIFO: a ConfigError, no hang."""
    from zagent.plugins.react.recorder import read_live

    os.mkfifo(tmp_path / "t.jsonl")
    with pytest.raises(ConfigError, match="not a regular file"):
        list(read_live(str(tmp_path / "t.jsonl")))


@needs_fifo
def test_a_fifo_mcp_configuration_file_is_refused_without_hanging(tmp_path):
    """An MCP configuration file that is a FIFO: a ConfigError, no hang."""
    pytest.importorskip("zagent_mcp")
    from zagent_mcp.config import read_file

    os.mkfifo(tmp_path / "mcp.json")
    with pytest.raises(ConfigError, match="not a regular file"):
        read_file(str(tmp_path / "mcp.json"))
