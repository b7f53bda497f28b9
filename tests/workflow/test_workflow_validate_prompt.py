"""EvoAgentX's ``validate_prompt`` repair of generated agents: inputs wrapped in ``<input>`` tags, output
headings renamed to the declared output they should carry."""

import pytest
from hypothesis import given, settings, strategies as st

from zagent.plugins.workflow import WorkFlowGraph
from zagent.plugins.workflow.agents import repair_spec

from .conftest import node

SEED = ('Seed 001 (GeneratedAgent.validate_prompt): "把 prompt 里 ### Instructions 段的输入占位符规整成 '
        '<input>{name}</input> 格式" / "检查 ### Output Format 段声明的输出名和 agent 的 outputs 对得上;对不上时,用词相似度 '
        '找最接近的输出名自动替换"')


def a_node(inputs, outputs):
    graph = WorkFlowGraph.from_dict({"name": "g", "goal": "test validate_prompt",
                                     "nodes": [node("analyse", inputs, outputs)], "edges": []})
    return graph.node("analyse")


PROMPT = ("### Instructions\nAnalyse the {requirements} for the {goal}.\n\n"
          "### Output Format\n## analysed_reqs\nThe analysis, one point per line.")


def test_inputs_in_the_instructions_are_wrapped_in_input_tags():
    """Seed 001 (validate_prompt): "把 prompt 里 ### Instructions 段的输入占位符规整成 <input>{name}</input> 格式"
    (the input placeholders of the Instructions section become <input>{name}</input>). Each placeholder
    there is wrapped once; the repaired spec still builds and renders the value inside the tags."""
    spec = repair_spec({"name": "A", "prompt": PROMPT}, a_node(["requirements", "goal"], ["analyzed_requirements"]),
                       set())
    assert "Analyse the <input>{requirements}</input> for the <input>{goal}</input>." in spec["prompt"]
    again = repair_spec({"name": "A", "prompt": spec["prompt"]},
                        a_node(["requirements", "goal"], ["analyzed_requirements"]), set())
    assert again["prompt"] == spec["prompt"]  # nothing wrapped twice


def test_an_output_heading_is_renamed_to_the_output_it_carries():
    """Seed 001 (validate_prompt): "检查 ### Output Format 段声明的输出名和 agent 的 outputs 对得上;对不上时,用词
    相似度找最接近的输出名自动替换" (output names in the Output Format section that do not match the outputs
    are replaced by the most similar output name). ``## analysed_reqs`` becomes ``## analyzed_requirements``;
    the Instructions and Output Format headings stay."""
    spec = repair_spec({"name": "A", "prompt": PROMPT}, a_node(["requirements", "goal"], ["analyzed_requirements"]),
                       set())
    assert "\n## analyzed_requirements\n" in spec["prompt"] and "analysed_reqs" not in spec["prompt"]
    assert spec["prompt"].startswith("### Instructions\n") and "### Output Format\n" in spec["prompt"]


@pytest.mark.parametrize("heading, output", [("summ", "summary"), ("Final Rpt", "final_report"),
                                             ("test_cases_list", "test_cases"), ("code_html", "html_code")])
def test_abbreviated_or_reordered_headings_find_their_output(heading, output):
    """Seed 001 (validate_prompt): "用词相似度找最接近的输出名自动替换" (word similarity picks the closest output
    name). Abbreviated, reworded or reordered headings in the Output Format section are renamed to the
    declared output among two."""
    prompt = f"Do it with {{topic}}.\n\n### Output Format\n## {heading}\ntext\n## notes\nmore"
    spec = repair_spec({"name": "A", "prompt": prompt}, a_node(["topic"], [output, "notes"]), set())
    assert f"## {output}\ntext" in spec["prompt"] and "## notes\nmore" in spec["prompt"]


@given(outputs=st.lists(st.from_regex(r"[a-z]{3,8}(_[a-z]{3,8})?", fullmatch=True), min_size=1, max_size=3,
                        unique=True), data=st.data())
@settings(max_examples=60, deadline=None)
def test_every_output_heading_of_the_format_section_ends_up_a_declared_output(outputs, data):
    """Seed 001 (validate_prompt): "检查 ### Output Format 段声明的输出名和 agent 的 outputs 对得上" (the output
    names of the Output Format section must match the outputs): as many headings as outputs there, each
    a declared name or a garbled one, all end up declared output names, each once."""
    garbled = [data.draw(st.sampled_from([o, o.upper(), o[:-1], o.replace("_", " ")])) for o in outputs]
    prompt = "Work on {topic}.\n\n### Output Format\n" + "\n".join(f"## {g}\nvalue" for g in garbled)
    spec = repair_spec({"name": "A", "prompt": prompt}, a_node(["topic"], outputs), set())
    section = spec["prompt"].split("### Output Format\n", 1)[1]
    headings = [line[3:] for line in section.splitlines() if line.startswith("## ")]
    assert sorted(headings) == sorted(outputs)


def test_the_one_heading_left_in_the_output_format_section_carries_the_one_output_left():
    """Seed 001 (validate_prompt): "检查 ### Output Format 段声明的输出名和 agent 的 outputs 对得上" (the output
    names declared in the Output Format section must match the outputs). A heading there unlike any output
    (``## result``), when it is the only one left and one output is left, is renamed to that output, whatever
    its heading level."""
    prompt = "### Instructions\nPlan {topic}.\n\n### Output Format\n## result\nThe plan.\n## notes\nAny notes."
    spec = repair_spec({"name": "A", "prompt": prompt}, a_node(["topic"], ["itinerary", "notes"]), set())
    assert "## itinerary\nThe plan.\n## notes\nAny notes." in spec["prompt"]
