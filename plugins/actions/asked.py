"""A tool call awaiting a human's approval in a workflow node or group-chat turn, asked as a durable interrupt.

``arun_asking`` (a ReAct loop) and ``settle_awaiting`` (a declared agent's batch) ask each awaiting call as the
node's (turn's) next interrupt; ``yes`` runs that very call, any other answer declines it. Outside an interrupt
scope nothing changes. docs/workflows.md, docs/security.md.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import TYPE_CHECKING, Any

import msgspec
from zagent import StashKey
from zagent.agentkit.runs import asking_scope as scope_of
from zagent.agentkit.counters import RunCounter, shared_counter
from zagent.agentkit.approvals import (FULL, approval_key, declined as declined_result, shown_call, tool_identity,
                                      shown_secrets, vetted_arguments)
from zagent.agentkit.signing import answer_signer, canonical
from zagent.agentkit.spent import claim, ran_before
from zagent.agentkit.runkeys import APPROVED, CALL_KEYS, PENDING_APPROVAL, PENDING_KEYS
from zagent.providerkit import new_call_id
from zagent.types import ToolCall, ToolResult

if TYPE_CHECKING:  # pragma: no cover
    from zagent import RunContext


#: per run: ``"<where>#<index>#<digest>"`` -> 1 for the call last asked at that position of that node (turn);
#: asking another call there sets the others to 0, so an answer only ever applies to the call it was given for
ASKED: "StashKey[RunCounter]" = StashKey("zagent.react.approvals_asked", restore=RunCounter.from_state)

YES = frozenset({"yes", "y", "approve", "approved", "allow", "ok", "true"})
SHOWN = FULL  # characters of the arguments a question shows in full (the digest binds all of them)


async def arun_asking(loop: Any, turn: Any, history: Any, ctx: "RunContext[Any]", *, owned: bool = False) -> Any:
    """``loop.arun(turn, history=..., ctx=...)``, a pause on approvals asked as interrupts (module docstring).
    ``owned``: the caller alone holds ``loop`` (``agent.chat``), so outside an interrupt scope a call held for a
    "later" approval is a ``ToolBlocked`` saying so (no one could resume the loop: it waited for ever)."""
    scope = scope_of(ctx)
    if scope is None and not owned:
        return await loop.arun(turn, history=history, ctx=ctx)
    pause = asyncio.Event()
    loop.on_pause = pause.set  # the loop says when it pauses (no polling)
    run = asyncio.ensure_future(loop.arun(turn, history=history, ctx=ctx))
    try:
        while True:
            paused = asyncio.ensure_future(pause.wait())
            try:
                await asyncio.wait({run, paused}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                paused.cancel()
            if run.done():
                return run.result()
            pause.clear()
            if not loop._blocked_on_approval():  # paused for another reason (loop.pause()): its owner resumes it
                continue
            if scope is None:
                await _stranded(loop, run)
            approve: list[str] = []
            deny: list[str] = []
            bound: list[str] = []
            held = [c for c in loop.state.pending if c.id in loop.state.awaiting_approval]
            try:
                for call in held:
                    yes = _answer(scope, loop.agent, call, loop._ctx, bound)
                    if yes is RAN:  # ran on this yes before (a rollback, a replay): its result says so, not run
                        loop.state.finished[call.id] = ran_result(call)
                    (approve if yes is True else deny).append(call.id)
            except BaseException:  # Interrupted (no answer yet): the loop ends here, the node (turn) pauses
                loop.abort()
                await asyncio.gather(run, return_exceptions=True)
                raise
            lost = _spend(scope, bound)  # every call of the batch answered: the approved ones run now
            for call in [c for c in held if c.id in approve and _tag_of(bound, approve, c.id) in lost]:
                loop.state.finished[call.id] = ran_result(call)  # another resume ran it on this yes meanwhile
                deny.append(call.id)
            loop.resume(approve=[i for i in approve if i not in deny], deny=deny)
    finally:
        if not run.done():
            run.cancel()
            await asyncio.gather(run, return_exceptions=True)


#: in a nested agent's ``ctx.frame``: the agents that called it as a tool, outermost first (``called_by``)
CALLERS: "StashKey[tuple[str, ...]]" = StashKey("zagent.actions.agent_callers")


def called_by(nested: "RunContext[Any]", caller: "RunContext[Any]") -> None:
    """Record in ``nested`` (an agent called as a tool) the chain of agents calling it: its questions say so."""
    nested.frame[CALLERS] = (*(caller.frame.get(CALLERS) or ()), caller.agent or "?")


async def _stranded(loop: Any, run: "asyncio.Future[Any]") -> None:
    """End ``loop``, paused on calls an approver left for later that no one can approve: ``ToolBlocked``."""
    from zagent.errors import ToolBlocked

    names = sorted({c.name for c in loop.state.pending if c.id in loop.state.awaiting_approval})
    loop.abort()
    await asyncio.gather(run, return_exceptions=True)
    raise ToolBlocked(f"agent {loop.agent!r} stopped: its call of {', '.join(map(repr, names))} waits for a human "
                      "approval given later (the approver answered None), and nothing can resume this run "
                      "(agent.chat holds its loop); configure an approver that answers True or False at once, or run "
                      "a ReActLoop and resume it with approve=[...]", rail="approval")


def question_of(agent: str, call: Any, callers: tuple[str, ...] = (), *, runs: Any = None) -> tuple[str, str]:
    """The question asked about ``call`` and the digest binding its answer (``asked_about``)."""
    question, digest, _ = asked_about(agent, call, callers, runs=runs)
    return question, digest


def asked_about(agent: str, call: Any, callers: tuple[str, ...] = (), *, runs: Any = None) -> tuple[str, str, bool]:
    """``(question, digest, approvable)`` for ``call``. The question shows secret-named values as ``***``; the
    digest binds the answer to the asking agent, its tool-calling callers, the tool and the canonical arguments; a
    yes cannot approve arguments (``runs``: defaults filled in) too long to show in full."""
    arguments = canonical(call.arguments).decode()
    digest = hashlib.sha256(canonical([*callers, agent, call.name]) + b"\0" + arguments.encode()).hexdigest()[:32]
    if runs is not None or isinstance(call.arguments, dict):  # stored, logged, printed: never a password or token
        arguments = canonical(shown_secrets(call.arguments if runs is None else runs)).decode()
    answer = "answer yes to allow this call, anything else declines it"
    shown, approvable = arguments, True
    if len(arguments) > SHOWN:  # each value by its path, cut; what it leaves out is said, and no yes approves it
        seen = shown_call(msgspec.json.decode(arguments), SHOWN)
        shown, approvable = seen.text, not seen.hidden
        if seen.hidden:
            answer = (f"{seen.unseen()} were not shown: the arguments are {len(arguments):,} characters, more than "
                      f"the {SHOWN:,} a question shows in full, so this call cannot be approved here and any answer "
                      "declines it (have the agent make shorter calls, or approve such calls in the app's approver)")
    from zagent.plugins.cliterminal import printable

    name = canonical(call.name).decode()
    # bidi, invisible and control characters shown escaped: in any app's UI the person reads the call that runs
    chain = ", called by ".join(canonical(c).decode() for c in callers[::-1])  # the direct caller first
    who = canonical(agent).decode() + (f" (called as a tool by {chain})" if callers else "")
    return (printable(f"agent {who} asks to call tool {name} with arguments {shown}; {answer}", layout=False),
            digest, approvable)


async def settle_awaiting(agent: str, calls: list[ToolCall], results: list[ToolResult], ctx: "RunContext[Any]",
                          rerun: Any) -> list[ToolResult]:
    """``results`` of a declared agent's batch, its calls awaiting approval answered inside an interrupt scope.

    A call the approval rail held (``PENDING_APPROVAL``) is asked as the node's (turn's) interrupt
    (``Interrupted`` until answered); once approved it runs again through ``rerun(calls)`` with its approval
    key granted, declined it gets a "declined" result. Outside an interrupt scope ``results`` stand."""
    pending = ctx.frame.get(PENDING_APPROVAL)
    if not pending:
        return results
    scope = scope_of(ctx)
    if scope is None:
        return results
    held = [c for c in calls if c.id in pending]
    approved: list[ToolCall] = []
    declined: dict[str, ToolResult] = {}
    bound: list[str] = []
    for call in held:  # in the batch's order: the node's interrupts are positional
        yes = _answer(scope, agent, call, ctx, bound)
        pending.discard(call.id)
        (ctx.frame.get(PENDING_KEYS) or {}).pop(call.id, None)
        if yes is True:
            approved.append(call)
        else:
            declined[call.id] = ran_result(call) if yes is RAN else declined_result(call)
    lost = _spend(scope, bound)
    for call in [c for c in approved if _tag_of(bound, [a.id for a in approved], c.id) in lost]:
        approved.remove(call)  # another resume ran it on this yes meanwhile
        declined[call.id] = ran_result(call)
    ran = dict(zip([c.id for c in approved], await _granted(approved, ctx, rerun))) if approved else {}
    return [ran.get(r.call_id) or declined.get(r.call_id) or r for r in results]


async def _granted(calls: list[ToolCall], ctx: "RunContext[Any]", rerun: Any) -> list[ToolResult]:
    """``rerun(calls)`` with each call's approval granted for this run only: a fresh id minted here (never
    the model's), its key approved, both withdrawn after, so a later call with the same id asks again."""
    minted = ctx.frame.setdefault(CALL_KEYS, {})
    granted = ctx.frame.setdefault(APPROVED, set())
    keys = []
    for call in calls:
        minted[call.id] = new_call_id()
        # the arguments as the rail sees them (a default filled in), or the rail's key never matches this one
        keys.append(approval_key(minted[call.id], call.name, vetted_arguments(ctx.kernel, call.name, call.arguments)))
    granted.update(keys)
    try:
        results: list[ToolResult] = await rerun(calls)
        return results
    finally:
        granted.difference_update(keys)
        for call in calls:
            minted.pop(call.id, None)


def _answer(scope: Any, agent: str, call: Any, ctx: "RunContext[Any]", bound: list[str]) -> Any:
    """The human's answer about ``call`` (True: approved, its binding added to ``bound``; ``RAN``: approved, and
    that yes already ran its call), or ``Interrupted`` when it has not been given yet."""
    question, digest, approvable = asked_about(agent, call, ctx.frame.get(CALLERS) or (),
                                               runs=vetted_arguments(ctx.kernel, call.name, call.arguments))
    tool = hashlib.sha256(tool_identity(ctx.kernel.find("tools", call.name)).encode()).hexdigest()[:16]
    asked = shared_counter(ctx, ASKED)
    where = "|".join(f"{k}={v}" for k, v in sorted(scope.where.items()))
    passes = getattr(scope, "passes", 0)
    run = getattr(scope, "run", None) or ctx.run_id  # the run asking (a chat nested in a node: the workflow's)
    if passes:  # a later pass of the node (a workflow loop): what was asked and bound in an earlier one is not this
        where = f"{where}|pass={passes}"
    while True:
        index = scope.used
        key = f"{where}#{index}#{digest}"
        if index < len(scope.answers):
            answer = scope.ask(question, matched=False)  # consumes this position's answer (matched below)
            if asked.counts.get(key, 0) > 0:  # kept: a later re-run of this node (turn) reaches it again
                yes = isinstance(answer, bool) and answer or (isinstance(answer, str) and answer.strip().lower() in YES)
                if not yes or not approvable:  # not approvable: too long to show, the question said so
                    return False
                if asked.counts.get(f"{key}#tool={tool}", 0) == 0:  # asked about another tool under the name: anew
                    continue
                vouches = getattr(scope, "vouches", None)
                bind = f"{key}#{_run_nonce(asked)}"  # this run, not another one given the same run id later
                if asked.counts.get(_held_mark(ctx, run, index, key, bind, tool), 0) == 0:
                    continue  # this run never asked about this call here (an edited record or question): anew
                signer = answer_signer(ctx.kernel).within(getattr(scope, "store", "") or "")  # the run's store's
                tag = f"ok#{key}#{signer.mac(run, index, 'approval', bind, b'yes')[:32]}"
                spent = getattr(scope, "spent", None)
                if spent is not None and tag in spent:  # it ran its call in an earlier attempt (a retry): anew
                    continue
                # given by this resume (or a verified store) to this very question: bound to it
                if vouches is None or vouches(index, question):
                    with asked.lock:
                        asked.counts[tag] = 1
                    return _bound(bound, tag)
                if asked.counts.get(tag, 0) > 0:  # given by an earlier resume, and bound then
                    return _bound(bound, tag)
                # a "yes" only an unsigned checkpoint holds, not bound by this user's key (edited in): asked anew
            continue  # an answer to another call (the model proposed something else this time): ask anew
        held = _held_mark(ctx, run, index, key, f"{key}#{_run_nonce(asked)}", tool)  # names this run, as answers do
        with asked.lock:  # this position now asks about this call only
            for other in [k for k in asked.counts if k.startswith(f"{where}#{index}#")]:
                asked.counts[other] = 0
            asked.counts[key] = asked.counts[f"{key}#tool={tool}"] = 1  # and about this tool (its code)
            asked.counts[held] = 1  # sealed: an unsigned store's edited record or question cannot claim it
        scope.ask(question)  # raises Interrupted: the node (turn) pauses with the question
        raise AssertionError("unreachable: no answer was given")  # pragma: no cover



def _held_mark(ctx: "RunContext[Any]", run: str, index: int, key: str, bind: str, tool: str) -> str:
    """The key, in the run's ``ASKED`` record, saying this run asked a person about the call ``bind`` names (its
    position, digest and run) of the tool ``tool`` at position ``index``: under ``answer_signer``, so whoever edits an
    unsigned store (the waiting question's text and the record of the call asked) cannot make a resume's yes, given
    to the question the person was shown, approve another call the model proposes on the replay."""
    store = getattr(scope_of(ctx), "store", "") or ""  # the run's checkpoint store (``Asking.store``)
    mac = answer_signer(ctx.kernel).within(store).mac(run, index, "asked", bind, tool.encode())
    return f"{key}#held={mac[:32]}"


#: ``_answer``: the yes was given, and it already ran its call (``agentkit.spent``)
RAN: Any = "ran"


def _bound(bound: list[str], tag: str) -> Any:
    """``True`` for the approval bound as ``tag``, kept in ``bound``; ``RAN`` when it ran its call before."""
    if ran_before(tag):
        return RAN
    bound.append(tag)
    return True


def _spend(scope: Any, bound: list[str]) -> set[str]:
    """The approvals ``bound`` run their calls now: a retry of the node asks anew (``Asking.spent``), and they are
    claimed at once (``agentkit.spent``), before the calls run: a replay of the node (turn) from its start (resumed at
    a later question, or rolled back) gives the model ``ran_result`` instead of running them again. Returns the
    ones another resume claimed first (two given the same yes at once): their calls must not run here."""
    spent = getattr(scope, "spent", None)
    if spent is not None:
        spent.update(bound)
    # at most once: a crash while the call runs does not make its yes count again
    return {tag for tag in bound if not claim(tag)}


def _tag_of(bound: list[str], approved: list[str], call_id: str) -> str:
    """The binding in ``bound`` of the approved call ``call_id`` (``bound`` holds one per approved call, in
    ``approved``'s order)."""
    return bound[approved.index(call_id)]


def _run_nonce(asked: RunCounter) -> str:
    """The run's own random name, kept in ``asked`` (``run#<hex>``; made on first use)."""
    with asked.lock:
        names = sorted(k for k, n in asked.counts.items() if k.startswith("run#") and n > 0)
        if not names:
            names = [f"run#{new_call_id()[5:]}"]  # 96 random bits: the package's one id maker
            asked.counts[names[0]] = 1
    return names[0]


def ran_result(call: ToolCall) -> ToolResult:
    """What the model is told about a call its person's yes already ran (not run again)."""
    return ToolResult(call_id=call.id, name=call.name, state="blocked", error="already ran on its approval",
                      content="Error: the call was not run: the person's yes to it was already used, and the call "
                              "ran (or began to run) on it then (this node or turn is being run again, or its run "
                              "was restored from an earlier checkpoint); a yes covers one run of a call. Use the "
                              "result it gave then if there is one, or make the call again to be asked anew")
