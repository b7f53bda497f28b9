"""Hold-out round four: data files (batch inputs, eval cases) of one endless line.

Attacks tried (session 2026-12-03, redteam2) and whether they got through before this module's fix:

- a downloaded eval cases file or batch inputs file that is one sparse 20 MiB "line" with no newline (a
  sparse file of terabytes costs no disk): GOT THROUGH (each reader, and ``zagent batch``'s line count, read
  the whole line into memory before looking at it) -- fixed: ``zagent.agentkit.files.bounded_lines`` reads at
  most ``MAX_LINE_BYTES`` (16 MiB) of a line and refuses a longer one with a ``ConfigError`` naming the line
- an ordinary file's last line without a newline: held (read as before)
"""

import pytest

from zagent.errors import ConfigError

SIZE = 20 * 2**20


def sparse(path):
    with open(path, "wb") as f:
        f.write(b'{"q": "')
        f.truncate(SIZE)
    return path


def test_an_endless_line_in_a_batch_inputs_file_is_refused(tmp_path):
    """``read_items``: a 20 MiB line is a ConfigError naming line 1, not an item read whole."""
    from zagent.plugins.batch.files import read_items

    with pytest.raises(ConfigError, match="line 1 is longer than 16 MiB"):
        list(read_items(str(sparse(tmp_path / "inputs.jsonl"))))


def test_an_endless_line_in_an_eval_cases_file_is_refused(tmp_path):
    """``read_cases``: a 20 MiB line is a ConfigError naming the file and line 1."""
    from zagent.plugins.evals.run import read_cases

    with pytest.raises(ConfigError, match="line 1 is longer than 16 MiB"):
        read_cases(str(sparse(tmp_path / "cases.jsonl")))


def test_a_last_line_without_a_newline_still_reads(tmp_path):
    """A normal file whose last line has no newline gives all its items."""
    from zagent.plugins.batch.files import read_items

    path = tmp_path / "inputs.jsonl"
    path.write_bytes(b'{"q": "a"}\n\n{"q": "b"}')
    assert [item.inputs for item in read_items(str(path))] == [{"q": "a"}, {"q": "b"}]
