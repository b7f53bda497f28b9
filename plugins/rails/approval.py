"""The human-approval rail (``needs_approval``, ``ask``) and the console approvers (docs/rails.md "Human approval").
A call of a ``sensitive`` tool or one matching ``approval.tools`` runs only if approved under its approval key
(``zagent.agentkit.approvals``) or the approver answers ``True``; ``None`` denies it as ``AWAITING`` and records it
pending; anything else, an exception or no approver denies (fail closed).
"""

from __future__ import annotations

import contextvars
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable, Optional

import msgspec

from zagent.agentkit.approvals import bound_key, shown_secrets
from zagent.agentkit.runkeys import APPROVED, CALL_KEYS, HELD_TOOLS, PENDING_APPROVAL, PENDING_KEYS
from zagent.agentkit.awaits import maybe_await

from .config import Layers, as_list, first_deny, tool_of

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel
    from zagent import RunContext, ToolCall

APPROVED_KEY = APPROVED  # ``zagent.agentkit.runkeys``: shared with the ReAct loop
PENDING_KEY = PENDING_APPROVAL
AWAITING = "awaiting human approval"
#: ``HELD_TOOLS`` (``zagent.agentkit.runkeys``): per run, never saved: the tool (and its handler) each held call's
#: approval key was asked about (or a restore found); an approval covers that tool only, not another registered
#: under its name before the call runs

_console_lock = threading.Lock()


def needs_approval(rails: dict[str, Any], call: "ToolCall", ctx: "RunContext[Any]") -> Optional[str]:
    """Why this call needs a human (``"sensitive"`` or the matching rule), or None.

    With the kernel's and an agent's ``approval`` (``Layers``), either one asking is enough."""
    approval = rails.get("approval")
    if isinstance(approval, Layers):
        for layer in approval:
            why = _needs(layer, call, ctx)
            if why is not None:
                return why
        return None
    return _needs(approval, call, ctx)


def _needs(approval: Any, call: "ToolCall", ctx: "RunContext[Any]") -> Optional[str]:
    if approval is False:
        return None
    approval = approval if isinstance(approval, dict) else {}
    tool = tool_of(ctx, call.name)
    if tool is not None and tool.sensitive and approval.get("sensitive", True):
        return "the tool is marked sensitive"
    patterns = approval.get("tools")
    if patterns:
        rule = first_deny(as_list(patterns, "approval.tools"), call.name, tool.toolset if tool else "")  # tightens
        if rule is not None:
            return f"it matches approval rule {rule!r}"
    return None


async def ask(rails: dict[str, Any], call: "ToolCall", ctx: "RunContext[Any]", why: str) -> Optional[str]:
    """Ask the configured approver about ``call``; return a deny reason or None to allow."""
    approved = ctx.frame.get(APPROVED_KEY)
    key = bound_key(call, ctx)  # the call's minted id, tool and arguments: a reused model id is a new call
    tool = tool_of(ctx, call.name)
    if approved and key is not None and key in approved:
        held = (ctx.frame.get(HELD_TOOLS) or {}).get(key)
        if held is None or (held[0] is tool and held[1] is getattr(tool, "handler", None)):
            return None
        # another tool took the name since the person was asked: a new call, under a newly minted id
        from zagent.providerkit import new_call_id

        ctx.frame[CALL_KEYS][call.id] = new_call_id()
        key = bound_key(call, ctx)
        why = (f"{why}; the approval given was for another tool registered as {call.name!r} at the time (it was "
               "replaced since), so the person is asked again")
    approver = rails.get("approver")
    kernel_rails = ctx.kernel.config.get("rails") or {}
    approver = resolve(approver, trusted=approver is kernel_rails.get("approver"), kernel=ctx.kernel)
    if approver is None:
        return (f"tool {call.name!r} needs human approval ({why}) and no approver is configured; set "
                "rails['approver'] in the agent's config or kernel.config to a callable approver(call, ctx) "
                "-> True/False/None, or 'console' for a y/n prompt")
    token = _UNANSWERED.set(None)
    try:
        answer = await maybe_await(approver(call, ctx))
        unanswered = _UNANSWERED.get()
    finally:
        _UNANSWERED.reset(token)
    if answer is True:
        return None
    if answer is False and unanswered is not None:  # the console approver declined it unasked: its reason
        return unanswered
    if answer is False:
        return f"a human declined the call of {call.name!r}"
    if answer is None:
        ctx.frame.setdefault(PENDING_KEY, set()).add(call.id)
        if key is not None:
            ctx.frame.setdefault(PENDING_KEYS, {})[call.id] = key
            ctx.frame.setdefault(HELD_TOOLS, {})[key] = (tool, getattr(tool, "handler", None))
        return AWAITING
    return f"the approver returned {type(answer).__name__}; expected True, False or None, so the call was blocked"


def resolve(approver: Any, *, trusted: bool = True, kernel: Optional["Kernel"] = None) -> Optional[Callable[..., Any]]:
    """The approver callable named by the config value (callable, ``"console"`` or ``"module:function"``).

    An import path is imported as is when ``trusted`` (it came from ``kernel.config``); from an agent's
    settings, only under the trust rules of ``zagent.speckit.trust`` (``trusted_imports`` or a trusted spec)."""
    named: Optional[Callable[..., Any]]  # what the config names: an approver, by its contract
    if approver is None or callable(approver):
        named = approver
        return named
    if approver == "console":
        return console_approver
    if isinstance(approver, str) and ":" in approver:
        from zagent.speckit.trust import import_path, resolve as resolve_import

        named = (import_path(approver, "rails.approver") if trusted
                 else resolve_import(approver, key="rails.approver", kernel=kernel))
        return named
    raise TypeError(f"rails setting 'approver' must be a callable, 'console' or 'module:function', got {approver!r}")


async def console_approver(call: "ToolCall", ctx: "RunContext[Any]") -> Optional[bool]:
    """Ask on stderr, read stdin: ``y`` allows, ``n`` (or empty) declines, ``l`` asks later; a closed stdin or its
    end declines too, and the call's reason says no one answered. A call shown cut is allowed only after ``v``
    showed its arguments in full; one too long for that is declined, saying why.

    The prompt runs in a worker thread so the event loop (and the run's
    other tool calls and timeouts) keeps going; prompts of parallel calls
    are asked one at a time.
    """
    return await _asked(call, ctx, True)


async def console_approver_now(call: "ToolCall", ctx: "RunContext[Any]") -> bool:
    """Like ``console_approver`` without ``[l]ater``: for a console that waits on the run and
    offers no other way to approve a call afterwards (``zagent chat``)."""
    return bool(await _asked(call, ctx, False))


class _NobodyAnswered(Exception):
    """Standard input gave no answer (closed, or at its end): the call is declined, and ``ask`` says why."""


#: why the console approver declined a call without a person's answer (no one answered, or the call was too long to
#: show in full), for ``ask``'s reason (set in the approver's own await, read after it)
_UNANSWERED: "contextvars.ContextVar[Optional[str]]" = contextvars.ContextVar("zagent_unanswered", default=None)


async def _asked(call: "ToolCall", ctx: "RunContext[Any]", later: bool) -> Optional[bool]:
    import asyncio

    why: list[str] = []
    hidden = shown_secrets(call.arguments)  # a password, a tool's api_token default: never on the screen
    shown = call if hidden == call.arguments else msgspec.structs.replace(call, arguments=hidden)
    try:
        decided = await asyncio.get_running_loop().run_in_executor(None, _prompt, shown, ctx.agent, later, why)
    except _NobodyAnswered as exc:  # declined (fail closed), saying it was no one's answer
        _UNANSWERED.set(f"no one answered the approval prompt for the call of {call.name!r}: {exc}, so the call was "
                        "blocked; run it where a person can answer on standard input (a terminal, or a y or n line "
                        "piped in for each prompt)")
        return False
    if why:
        _UNANSWERED.set(why[0])
    return decided


def _prompt(call: "ToolCall", agent: Optional[str], later: bool, why: Optional[list[str]] = None) -> Optional[bool]:
    """The console's question about ``call`` (docs/rails.md "Human approval"): when its arguments are cut, ``y`` is
    taken only after ``v`` showed them all in full; past ``FULL`` characters in full the call is declined unasked,
    its reason for the model added to ``why``."""
    from zagent.agentkit.approvals import FULL, shown_call
    from zagent.plugins.cliterminal import SafeStream, raw_stream

    seen = shown_call(call.arguments, 500)  # every argument's name shows, however long one is
    who = f"agent {agent!r} wants" if agent else "the agent wants"
    question = f"\n{who} to run {call.name}({seen.text})"
    ending = " / [l]ater" if later else ""
    with _console_lock:
        # the model chose the arguments: shown with control, bidi and invisible characters escaped (also
        # when an app calls this approver outside the ``zagent`` command, whose streams are already safe)
        err = SafeStream(raw_stream(sys.stderr))
        _drop_typeahead()
        if seen.hidden and not seen.full:  # too long to show: no one is asked to approve what they cannot see
            err.write(f"{question}\nDeclined without asking: {seen.unseen()} were not shown above, and in full the "
                      f"arguments are {seen.size:,} characters, more than the {FULL:,} this prompt shows; the agent "
                      "is told why. Press Enter to go on: ")
            err.flush()
            try:
                sys.stdin.readline()  # this prompt's answer line, so a piped answer is not taken by the next one
            except (AttributeError, ValueError, OSError):
                pass
            if why is not None:
                why.append(f"the call of {call.name!r} was declined without asking a person: its arguments are "
                           f"{seen.size:,} characters in full, more than the {FULL:,} the console approval prompt "
                           "shows; make the call with shorter arguments (split the work into several calls), or have "
                           "the app approve such calls with its own approver (rails 'approver')")
            return False
        viewed = not seen.hidden
        if seen.hidden:
            question += f"\n{seen.unseen()} were not shown; [v]iew shows every argument in full"
        text = question
        while True:
            err.write(f"{text}\nAllow? {'[y]es / [n]o' if viewed else '[v]iew all / [n]o'}{ending}: ")
            err.flush()
            answer = _read_answer()
            if answer in ("", "n", "no"):
                return False
            if later and answer in ("l", "later"):
                return None
            if answer in ("y", "yes") and viewed:
                return True
            text = question  # anything else: the question again
            if answer in ("y", "yes"):
                text = f"\nNot allowed: {seen.unseen()} were not shown; press v to see them all, or n to decline"
            elif answer in ("v", "view") and seen.hidden:
                viewed = True
                question = text = (f"\n{seen.full}\n{who} to run {call.name} with the arguments above, shown in "
                                   f"full ({seen.size:,} characters)")


def _drop_typeahead() -> None:
    """Discard what was typed at a terminal before this question showed: a ``y`` typed at a prompt the model's
    streamed text imitated would otherwise answer the real one (a pipe's lines are answers given on purpose: kept)."""
    try:
        import termios

        fd = sys.stdin.fileno()
        if sys.stdin.isatty():
            termios.tcflush(fd, termios.TCIFLUSH)
    except ImportError:  # not POSIX
        pass
    except (AttributeError, ValueError, OSError, termios.error):  # no stdin, no terminal, a flush refused: asked anyway
        pass


def _read_answer() -> str:
    """One answer line from standard input, stripped and lower-cased (``_NobodyAnswered`` when there is none)."""
    try:
        line = sys.stdin.readline()
    except (AttributeError, ValueError, OSError) as exc:  # no stdin (``<&-``), a closed or unreadable one
        raise _NobodyAnswered(f"standard input is closed or unreadable ({type(exc).__name__})") from None
    if not line:
        raise _NobodyAnswered("standard input ended (end of input) before an answer was given")
    return line.strip().lower()
