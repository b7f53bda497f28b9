"""The batch files as parsers of hostile input: any JSONL line is an item or a named problem, and a results
file cut at any byte keeps exactly its whole lines."""

import json

import msgspec
from hypothesis import given
from hypothesis import strategies as st
from zagent.plugins.batch.files import ResultsFile, read_items

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8)
lines = st.one_of(json_values.map(json.dumps), st.text(max_size=20).filter(lambda t: "\n" not in t and "\r" not in t))


@given(st.lists(lines, max_size=12))
def test_every_nonblank_line_is_one_item_or_problem(tmp_path_factory, raw_lines):
    """Any line gives exactly one Item with its line number; non-objects and bad ids carry a problem, never raise."""
    path = tmp_path_factory.mktemp("in") / "in.jsonl"
    path.write_text("".join(line + "\n" for line in raw_lines))
    items = list(read_items(path))
    expected = [n for n, line in enumerate(raw_lines, 1) if line.encode().strip()]  # ASCII whitespace only
    assert [i.line for i in items] == expected
    for item in (i for i in items if i.problem is None):
        data = msgspec.json.decode(raw_lines[item.line - 1])
        assert isinstance(data, dict) and item.inputs == {k: v for k, v in data.items() if k != "id"}
        assert item.id == (None if data.get("id") is None else str(data["id"]))


@given(st.integers(1, 5), st.data())
def test_results_file_cut_anywhere_keeps_whole_lines(tmp_path_factory, n, data):
    """A results file cut at any byte (a kill mid-write) reopens with exactly the whole lines before the cut."""
    path = tmp_path_factory.mktemp("out") / "out.jsonl"
    rows = [json.dumps({"id": f"i{k}", "line": k + 1, "ok": True, "output": {"a": "x" * k}, "made_by": "job1",
                        "inputs_digest": f"{k:016x}" * 2}) + "\n" for k in range(n)]
    blob = "".join(rows).encode()
    cut = data.draw(st.integers(0, len(blob)))
    path.write_bytes(blob[:cut])
    f = ResultsFile(path, made_by="job1")
    f.close()
    whole = blob[:cut].count(b"\n")
    assert f.done.ids == {f"i{k}": k for k in range(whole)}
    assert path.read_bytes() == b"".join(r.encode() for r in rows[:whole])
