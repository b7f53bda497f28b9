"""``MiproPromptTemplate`` and the smallest optimizer that fills it (EvoAgentX's dspy-compatible template).

``MiproOptimizer`` scores instruction variants and demonstration sets on the held-out training examples and returns
the best template, deterministically. docs/optimizing.md.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import attrs

from zagent.errors import ConfigError
from zagent.types import Message

if TYPE_CHECKING:  # pragma: no cover
    from zagent import RunContext


def _render_fields(values: dict[str, Any]) -> str:
    return "\n".join(f"## {name}\n{value}" for name, value in values.items())


@attrs.define(kw_only=True)
class MiproPromptTemplate:
    """An instruction plus demonstrations, rendered as chat messages (docs/optimizing.md).

    :ivar demonstrations: ``[{"inputs": {...}, "outputs": {...}}, ...]``.
    """

    instruction: str
    demonstrations: list[dict[str, Any]] = attrs.field(factory=list)
    system: Optional[str] = None
    inputs: list[str] = attrs.field(factory=list)
    outputs: list[str] = attrs.field(factory=list)

    def __attrs_post_init__(self) -> None:
        for i, demo in enumerate(self.demonstrations):
            if not isinstance(demo, dict) or not isinstance(demo.get("inputs"), dict) \
                    or not isinstance(demo.get("outputs"), dict):
                raise ConfigError(f"demonstration #{i} must be {{'inputs': {{...}}, 'outputs': {{...}}}}, "
                                  f"got {demo!r}"[:300])

    def format(self, inputs: dict[str, Any]) -> list[Message]:
        """The messages of one call with ``inputs``."""
        head = [self.system or "", self.instruction]
        if self.outputs:
            head.append("Answer with a '## <name>' heading for each output: " + ", ".join(self.outputs) + ".")
        messages = [Message(role="system", content="\n\n".join(p for p in head if p))]
        for demo in self.demonstrations:
            messages.append(Message(role="user", content=_render_fields(demo["inputs"])))
            messages.append(Message(role="assistant", content=_render_fields(demo["outputs"])))
        messages.append(Message(role="user", content=_render_fields(inputs)))
        return messages

    def to_spec(self) -> dict[str, Any]:
        """The template as an agent spec's ``prompt_template`` (chat style: demonstrations as turns), so an
        optimized template drops into ``k.agent({..., "prompt_template": t.to_spec()})``."""
        spec: dict[str, Any] = {"style": "chat", "instruction": self.instruction,
                                "demonstrations": [dict(d) for d in self.demonstrations]}
        if self.system:
            spec["system"] = self.system
        return spec

    @classmethod
    def from_spec(cls, spec: dict[str, Any], inputs: Sequence[str] = (), outputs: Sequence[str] = ()) -> "MiproPromptTemplate":
        """A template from an agent spec's ``prompt_template`` (its system, instruction and demonstrations)."""
        return cls(instruction=str(spec.get("instruction") or ""), system=spec.get("system"),
                   demonstrations=list(spec.get("demonstrations") or []), inputs=list(inputs), outputs=list(outputs))

    def with_candidate(self, instruction: str, demonstrations: Sequence[dict[str, Any]]) -> "MiproPromptTemplate":
        """A copy with this instruction and these demonstrations."""
        return attrs.evolve(self, instruction=instruction, demonstrations=list(demonstrations))


def contains_outputs(prediction: str, example: dict[str, Any]) -> float:
    """The default metric: 1.0 when every expected output value appears in the reply (case-insensitive)."""
    text = prediction.lower()
    return float(all(str(v).strip().lower() in text for v in example["outputs"].values()))


@attrs.frozen
class Trial:
    instruction: str
    demonstrations: int
    score: float


@attrs.frozen
class OptimizeResult:
    """The best template, its score on the held-out examples and every trial (in the order run)."""

    template: MiproPromptTemplate
    score: float
    trials: list[Trial]


@attrs.define(kw_only=True)
class MiproOptimizer:
    """Pick an instruction variant and demonstrations by score on a small dataset."""

    llm: Any
    metric: Callable[[str, dict[str, Any]], float] = contains_outputs
    max_demos: int = 2
    max_candidates: int = 8

    async def aoptimize(self, template: MiproPromptTemplate, trainset: Sequence[dict[str, Any]],
                        instructions: Sequence[str] = (), ctx: Optional["RunContext[Any]"] = None) -> OptimizeResult:
        """Try ``template.instruction`` and each of ``instructions`` with up to ``max_candidates`` sets of
        0..``max_demos`` demonstrations from ``trainset``; score each on the examples it does not show."""
        examples = list(trainset)
        if len(examples) < 2:
            raise ConfigError("MiproOptimizer needs at least 2 training examples ({'inputs':..., 'outputs':...})")
        MiproPromptTemplate(instruction="", demonstrations=examples)  # each example checked here
        variants = list(dict.fromkeys([template.instruction, *instructions]))
        demo_sets: list[tuple[int, ...]] = []
        for size in range(0, min(self.max_demos, len(examples) - 1) + 1):
            demo_sets += list(itertools.islice(itertools.combinations(range(len(examples)), size),
                                               self.max_candidates))
        demo_sets = demo_sets[: self.max_candidates]
        trials: list[Trial] = []
        best: Optional[tuple[tuple[float, int], MiproPromptTemplate]] = None
        for instruction in variants:
            for chosen in demo_sets:
                candidate = template.with_candidate(instruction, [examples[i] for i in chosen])
                held_out = [e for i, e in enumerate(examples) if i not in chosen]
                score = await self._score(candidate, held_out, ctx)
                trials.append(Trial(instruction=instruction, demonstrations=len(chosen), score=score))
                rank = (score, -len(chosen))  # a tie goes to fewer demonstrations (a shorter prompt), then the earlier
                if best is None or rank > best[0]:
                    best = (rank, candidate)
        assert best is not None
        return OptimizeResult(template=best[1], score=best[0][0], trials=trials)

    def optimize(self, template: MiproPromptTemplate, trainset: Sequence[dict[str, Any]],
                 instructions: Sequence[str] = ()) -> OptimizeResult:
        """Sync twin of ``aoptimize``."""
        from zagent import run_sync

        return run_sync(self.aoptimize(template, trainset, instructions))

    async def _score(self, candidate: MiproPromptTemplate, examples: list[dict[str, Any]], ctx: Optional["RunContext[Any]"]) -> float:
        total = 0.0
        for example in examples:
            reply = await self.llm.asend(self.llm.request(candidate.format(example["inputs"])), ctx)
            total += float(self.metric(reply.text, example))
        return total / len(examples)


__all__ = ["MiproOptimizer", "MiproPromptTemplate", "OptimizeResult", "Trial", "contains_outputs"]
