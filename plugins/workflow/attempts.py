"""``NodeAttempts``: one node's run: ``1 + retries`` tries (none more after a provider's error, a checkpoint's, a
``RunStopped`` or an interrupt), in process or on a remote executor with its agents locked here (a lost worker's
node runs again, up to ``LOST_RETRIES`` times). ``ask_text``: an ``interrupt`` node's question."""

from __future__ import annotations

import contextlib
import re
from typing import Any

import msgspec
from zagent.agentkit.counters import shared_counter
from zagent.agentkit.interrupts import QUESTIONS, Asking, Interrupt, as_data, asking
from zagent.agentkit.signing import store_identity
from zagent import interrupt
from zagent.errors import CheckpointError, Interrupted, ProviderError, RunStopped
from zagent.agentkit.units import Unit, UnitLost
from zagent.types import Usage

from .calls import call_step, node_outputs, node_payload
from .errors import WorkFlowError
from .graph import WorkFlowNode
from .running import RunCore, short

NODE_RUNNER = "zagent.plugins.workflow.units:run_node"
LOST_RETRIES = 2  # extra runs of a node whose remote worker was lost (on top of the node's own retries)


class NodeAttempts(RunCore):
    """The node runs of a workflow run (a base of ``WorkFlowRun``)."""

    async def _attempts(self, name: str) -> tuple[dict[str, Any], int]:
        node = self.nodes[name]
        tries = 1 + (node.retries if node.retries is not None else self.ex.retries)
        async with self.sem:
            for attempt in range(1, tries + 1):
                await self._emit("node_start", node=name, attempt=attempt)
                try:
                    return await self._run_node(name), attempt
                except Exception as exc:
                    if attempt == tries or isinstance(exc, (ProviderError, CheckpointError, RunStopped, Interrupted)):
                        raise  # a provider's error was already retried by its own policy; a checkpoint's or
                        # a usage limit's (any RunStopped: it ends the whole run) is not the node's to retry, and
                        # an interrupt pauses the node
                    await self._emit("node_retry", node=name, attempt=attempt, error=short(self.masked(exc)))
        raise AssertionError("unreachable")  # pragma: no cover

    def _origins(self, agents: dict[str, Any]) -> dict[str, Any]:
        """The trust and file each stored agent among ``agents`` was built with (``AgentManager.origin_of``)."""
        origin_of = getattr(self.ex.manager, "origin_of", None)
        return {n: o for n in agents if origin_of is not None and (o := origin_of(n)) is not None}

    async def _run_node(self, name: str) -> dict[str, Any]:
        """Hand one node run to the executor: in process as is, elsewhere with the node's agents locked here."""
        key = f"{self.run_id}/{name}"
        if self.units.in_process or self.nodes[name].kind == "interrupt":
            done: dict[str, Any] = await self.units.submit(Unit(key=key, local=lambda: self._call_agents(name)))
            return done
        async with contextlib.AsyncExitStack() as held:
            agents = {n: await held.enter_async_context(self.ex.manager.ausing(n, timeout=self.ex.agent_timeout))
                      for n in sorted(set(self.agents[name]))}  # one order everywhere: no lock cycles
            unit = Unit(key=key, local=lambda: _unreachable(key), runner=NODE_RUNNER,
                        payload=lambda: node_payload(self.nodes[name], self.agents[name], agents, self.values,
                                                     self.run_id, self.answers.get(name, []),
                                                     None if self.vouched is None else self.vouched.get(name, {}),
                                                     self.passes.get(name, 0), self._asking(name).recorded(),
                                                     store_identity(self.ex.checkpoints), self._origins(agents)))
            for lost in range(LOST_RETRIES + 1):  # a lost worker is not the node's failure: run it again
                try:
                    result = await self.units.submit(unit)
                    break
                except UnitLost as exc:
                    if lost == LOST_RETRIES:
                        raise
                    await self._emit("node_retry", node=name, attempt=lost + 1, error=short(exc))
        if not isinstance(result, dict) or not isinstance(result.get("outputs"), dict):
            raise WorkFlowError(f"node {name!r}: the executor returned {type(result).__name__}, not "
                                "{'outputs': {...}, 'usage': {...}}")
        self.usage = self.usage + msgspec.convert(result.get("usage") or {}, Usage)
        if result.get("interrupt") is not None:  # the worker's node asked a person (data from another process)
            asked = msgspec.convert(result["interrupt"], Interrupt)
            asked = msgspec.structs.replace(asked, question=as_data(asked.question, "a worker's question"),
                                            node=name, speaker=None, round=None)
            self._asking(name).note(asked.index, asked.question)  # an answer is taken only by this question
            raise Interrupted(asked.describe(), interrupt=asked)
        outputs: dict[str, Any] = result["outputs"]
        return outputs

    async def _call_agents(self, name: str) -> dict[str, Any]:
        node = self.nodes[name]
        produced: dict[str, Any] = {}
        vouched = None if self.vouched is None else self.vouched.get(name, {})
        with asking(self._asking(name, self.answers.get(name, ()), vouched)) as scope:
            try:
                if node.kind == "interrupt":
                    return {node.output_names[0]: interrupt(ask_text(node, self.values))}
                for agent_name in self.agents[name]:
                    async with self.ex.manager.ausing(agent_name, timeout=self.ex.agent_timeout) as agent:
                        self.usage = self.usage + await call_step(agent, agent_name, node, self.values, produced,
                                                                  self.kernel, self.run_id, self.share, self.deps)
            finally:
                if scope.asked is not None:  # asked, even if an agent caught the exception: the node pauses
                    raise Interrupted(scope.asked.describe(), interrupt=scope.asked)
        return node_outputs(node, produced)

    def _asking(self, name: str, answers: Any = (), vouched: Any = None) -> Asking:
        """Node ``name``'s interrupt scope: its answers, its pass, and the run's record of the questions asked."""
        return Asking(answers, vouched=vouched, passes=self.passes.get(name, 0),
                      record=shared_counter(self._ctx, QUESTIONS), spent=self.spent.setdefault(name, set()),
                      run=self.run_id, store=store_identity(self.ex.checkpoints), node=name)


def _unreachable(key: str) -> Any:
    raise WorkFlowError(f"node run {key!r} was sent back to this process by a remote executor; "
                        "its agents are locked here for the remote run")


def ask_text(node: WorkFlowNode, values: dict[str, Any]) -> str:
    """The fixed question of an ``interrupt`` node, ``{name}`` replaced by its input ``name``'s value."""
    names = set(node.input_names)

    def value(m: re.Match[str]) -> str:
        found = values.get(m.group(1))
        if m.group(1) not in names or found is None:
            return m.group(0)
        return found if isinstance(found, str) else msgspec.json.encode(found, enc_hook=repr).decode()

    return re.sub(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", value, node.question)
