"""Typed outputs (pydantic-ai's ``output_type``): a declared agent given a pydantic model, msgspec Struct,
dataclass or attrs class asks for its fields, re-asks when the answer does not fit it, and returns an instance."""

import dataclasses
import enum
import json
from typing import Literal, Optional

import attrs
import msgspec
import pytest

from zagent import ConfigError
from zagent.plugins.actions import OutputRejected
from zagent.speckit import Trust

pydantic = pytest.importorskip("pydantic")


class Mood(str, enum.Enum):
    HAPPY = "happy"
    SAD = "sad"


class City(pydantic.BaseModel):
    """A city."""

    name: str
    population: int = pydantic.Field(description="people living there")


class Answer(pydantic.BaseModel):
    """An answer with its confidence."""

    answer: str
    confidence: int = pydantic.Field(description="0 to 100")
    mood: Literal["happy", "sad"] = "happy"
    source: Optional[str] = None


class Trip(pydantic.BaseModel):
    stops: list[City]
    start: City


class StructAnswer(msgspec.Struct):
    answer: str
    tags: list[str] = []


@dataclasses.dataclass
class DataAnswer:
    answer: str
    weight: float


@attrs.define
class AttrsAnswer:
    answer: str
    ok: bool


class MoodAnswer(msgspec.Struct):
    answer: str
    mood: Mood


def _spec(output_type, **over):
    spec = {"name": "typed", "prompt": "Q: {q}", "inputs": [{"name": "q", "type": "string"}],
            "output_type": output_type, "parse_mode": "json"}
    spec.update(over)
    return spec


def _agent(kernel, output_type, replies, **over):
    agent = kernel.agent(_spec(output_type, **over))
    agent.llm = kernel.llm("scripted:typed", replies=[json.dumps(r) if isinstance(r, dict) else r for r in replies])
    return agent


def test_a_pydantic_answer_is_an_instance_of_the_model(kernel):
    """output_type=Answer: result.output is an Answer, its fields read as attributes, to_dict is its JSON data."""
    result = _agent(kernel, Answer, [{"answer": "Paris", "confidence": 90}])(q="Capital of France?")
    assert isinstance(result.output, Answer) and result.output.confidence == 90
    assert result.answer == "Paris" and result.to_dict() == {"answer": "Paris", "confidence": 90, "mood": "happy",
                                                             "source": None}


def test_the_models_fields_and_descriptions_reach_the_prompt(kernel):
    """The output instructions name every field of the class, with its description and the allowed values."""
    agent = _agent(kernel, Answer, [{"answer": "Paris", "confidence": 90}])
    agent(q="Capital of France?")
    prompt = "\n".join(m.content or "" for m in agent.llm.requests[0].messages)
    for text in ("answer", "confidence", "0 to 100", "mood", '"happy", "sad"', "source"):
        assert text in prompt


def test_an_answer_that_does_not_fit_the_model_is_asked_again(kernel):
    """A value the field types allow but the class does not (mood 'angry' for Literal['happy', 'sad']) sends
    the validation error back to the model, and the next answer is the output."""
    agent = _agent(kernel, Answer, [{"answer": "Paris", "confidence": 9, "mood": "angry"},
                                    {"answer": "Paris", "confidence": 9, "mood": "sad"}])
    result = agent(q="Capital of France?")
    assert result.output.mood == "sad"
    retry = agent.llm.requests[1].messages[-1].content
    assert "does not fit Answer" in retry and "mood" in retry


def test_an_answer_that_never_fits_is_output_rejected(kernel):
    """Past max_output_retries, OutputRejected names the class and what did not fit."""
    agent = _agent(kernel, MoodAnswer, [{"answer": "x", "mood": "angry"}] * 2)
    with pytest.raises(OutputRejected, match="does not fit MoodAnswer") as info:
        agent(q="?")
    assert "mood" in info.value.reasons[-1]


def test_nested_models_become_nested_fields_and_instances(kernel):
    """A list of models and a model field are asked as nested objects and come back as model instances."""
    trip = {"stops": [{"name": "Lyon", "population": 500000}], "start": {"name": "Paris", "population": 2000000}}
    result = _agent(kernel, Trip, [trip])(q="Plan a trip")
    assert isinstance(result.output.start, City) and result.output.stops[0].name == "Lyon"


@pytest.mark.parametrize("cls, reply", [(StructAnswer, {"answer": "a", "tags": ["x"]}),
                                        (DataAnswer, {"answer": "a", "weight": 1.5}),
                                        (AttrsAnswer, {"answer": "a", "ok": True})])
def test_structs_dataclasses_and_attrs_classes_are_output_types(kernel, cls, reply):
    """A msgspec Struct, a dataclass and an attrs class work as output types: the result is an instance."""
    result = _agent(kernel, cls, [reply])(q="?")
    assert isinstance(result.output, cls) and result.answer == "a" and result.to_dict()["answer"] == "a"


def test_outputs_and_output_type_together_are_a_config_error(kernel):
    """A spec giving both its own outputs and an output_type is refused: the class declares the outputs."""
    with pytest.raises(ConfigError, match="not both"):
        kernel.agent(_spec(Answer, outputs=[{"name": "other"}]))


@pytest.mark.parametrize("bad", [int, dict, object])
def test_a_class_that_is_no_output_type_is_a_config_error(kernel, bad):
    """output_type=int (or another class without fields) is a ConfigError saying what is accepted."""
    with pytest.raises(ConfigError, match="pydantic model, msgspec Struct, dataclass or attrs class"):
        kernel.agent(_spec(bad))


def test_a_saved_agent_names_its_class_and_loads_again(kernel, tmp_path, monkeypatch):
    """save() writes output_type as 'module:Class' without the derived outputs; the file loads (trusted) into
    an agent with the same outputs and class."""
    agent = kernel.agent(_spec(StructAnswer))
    path = tmp_path / "typed.json"
    agent.save(path)
    data = json.loads(path.read_text())
    assert data["output_type"] == f"{__name__}:StructAnswer" and "outputs" not in data
    again = kernel.agent(str(path), trust=True)
    assert again.output_type is StructAnswer
    assert [f.name for f in again.action().output_spec.fields] == ["answer", "tags"]


def test_an_untrusted_spec_naming_an_output_type_is_refused(kernel, tmp_path):
    """An agent file naming output_type by import path outside its folder is refused unless trusted: nothing
    is imported from it."""
    path = tmp_path / "typed.json"
    path.write_text(json.dumps(_spec("tests.actions.test_output_type:Answer")))
    with pytest.raises(ConfigError, match="trust"):
        kernel.agent(str(path))
    typed = kernel.agent(str(path), trust=True).output_type
    assert (typed.__module__, typed.__qualname__) == ("tests.actions.test_output_type", "Answer")


def test_a_spec_file_names_a_model_next_to_it(kernel, tmp_path, monkeypatch):
    """An agent file naming 'r13typed_models:Verdict', a module in its own folder, builds with the CLI's trust
    for that file; the answer is a Verdict."""
    monkeypatch.delitem(__import__("sys").modules, "r13typed_models", raising=False)
    (tmp_path / "r13typed_models.py").write_text(
        "import msgspec\n\nclass Verdict(msgspec.Struct):\n    verdict: str\n    score: int\n")
    path = tmp_path / "judge.json"
    path.write_text(json.dumps(_spec("r13typed_models:Verdict")))
    agent = kernel.agent(str(path), trust=Trust.for_file(path))
    agent.llm = kernel.llm("scripted:judge", replies=['{"verdict": "ok", "score": 3}'])
    result = agent(q="Judge this")
    assert type(result.output).__name__ == "Verdict" and result.score == 3
    __import__("sys").modules.pop("r13typed_models", None)


def test_the_offline_model_answers_a_model_with_choices(kernel):
    """With no model named (the offline test model), a class with a Literal and nested models is answered with
    values that fit it: an enum's first value is the field's example, which that model answers."""
    agent = kernel.agent(_spec(Trip, parse_mode=None))
    result = agent(q="Plan a trip")
    assert isinstance(result.output, Trip) and isinstance(result.output.start, City)
    choice = kernel.agent(_spec(MoodAnswer, parse_mode=None))(q="How are you?")
    assert choice.output.mood is Mood.HAPPY


def test_a_fields_examples_and_first_choice_reach_the_prompt(kernel):
    """A pydantic field's examples, and an enum's first value, are the field's examples in the declaration."""
    from zagent.agentkit.outputtypes import fields_for

    class Pick(pydantic.BaseModel):
        city: str = pydantic.Field(examples=["Lyon", "Paris"])
        mood: Mood

    by_name = {f["name"]: f for f in fields_for(Pick)}
    assert by_name["city"]["examples"] == ["Lyon", "Paris"] and by_name["mood"]["examples"] == ["happy"]
