"""Speaker selection: who talks next (docs/groupchat.md#speaker-selection).

A selector (``aselect``/``select`` or a callable, maybe async) answers a name or ``None`` from a ``Selection``;
built in: ``round_robin``, ``rules``, ``llm``. ``choose`` falls back to round-robin on no usable answer and
breaks runs past ``max_consecutive``; a ``ProviderError`` while asking ends the chat.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

import attrs

from zagent.agentkit.placeholders import placeholders
from zagent.errors import ConfigError, ProviderError, ZagentError
from zagent.agentkit.awaits import maybe_await

from .history import ChatMessage, render_transcript

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, RunContext

LLM_PROMPT = """You choose who speaks next in a group chat working on this task:
{task}

Participants:
{roles}

Conversation so far:
{transcript}

Who should speak next? Reply with exactly one name from: {names}."""
#: the placeholders a selection prompt may use
SELECTOR_NAMES = frozenset({"task", "roles", "names", "transcript"})


@attrs.frozen(repr=False)
class SpeakerInfo:
    name: str
    description: str = ""


@attrs.frozen(repr=False)
class Selection:
    """What a selector sees before a round (docs/groupchat.md#plugging-in-a-policy)."""

    speakers: tuple[SpeakerInfo, ...]
    messages: tuple[ChatMessage, ...]
    round: int
    task: str
    ctx: "RunContext[Any]"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.speakers)

    @property
    def last_speaker(self) -> Optional[str]:
        """The last *participant* who spoke (messages from ``user`` and outsiders do not count)."""
        names = set(self.names)
        return next((m.speaker for m in reversed(self.messages) if m.speaker in names), None)

    def consecutive(self, name: str) -> int:
        """How many of the latest participant turns in a row were ``name``'s."""
        names, n = set(self.names), 0
        for m in reversed(self.messages):
            if m.speaker not in names:
                continue
            if m.speaker != name:
                break
            n += 1
        return n


@attrs.frozen(repr=False)
class Choice:
    """The speaker chosen and how: ``policy``, ``fallback`` (no usable answer) or ``repeat_broken``."""

    speaker: str
    how: str
    proposed: Optional[str] = None
    error: Optional[str] = None


# -- built-in policies --------------------------------------------------------------


def round_robin(sel: Selection) -> str:
    """The speaker after the last one, in declaration order (the first one to start)."""
    names = sel.names
    last = sel.last_speaker
    if last is None:
        return names[0]
    return names[(names.index(last) + 1) % len(names)]


@attrs.define(repr=False)
class RoundRobin:
    """``round_robin``, optionally starting with ``first``."""

    first: Optional[str] = None

    def select(self, sel: Selection) -> str:
        if sel.last_speaker is None and self.first:
            return self.first
        return round_robin(sel)


@attrs.define(repr=False)
class RoleRules:
    """Role rules declared as data (docs/groupchat.md#speaker-selection); ``None`` when no rule applies."""

    rules: list[dict[str, Any]]
    first: Optional[str] = None

    @classmethod
    def from_data(cls, rules: Union[dict[str, Any], Sequence[dict[str, Any]]], first: Optional[str] = None) -> "RoleRules":
        if isinstance(rules, dict):
            items = [{"after": k, "next": v} for k, v in rules.items()]
        elif isinstance(rules, (list, tuple)):
            bad = next((r for r in rules if not isinstance(r, dict)), None)
            if bad is not None:
                raise ConfigError(f"selection rules: each rule is a mapping {{'after': A, 'next': B}}, got "
                                  f"{type(bad).__name__} {bad!r:.60}")
            items = [dict(r) for r in rules]
        else:
            raise ConfigError(f"selection rules must be a mapping or a list of rules, got {type(rules).__name__}")
        for rule in items:
            unknown = set(rule) - {"after", "next", "when"}
            if unknown or not isinstance(rule.get("after"), str) or not isinstance(rule.get("next"), str):
                raise ConfigError(f"bad selection rule {rule!r}: write {{'after': A, 'next': B}} "
                                  "with an optional 'when': 'phrase'")
        return cls(rules=items, first=first)

    def names(self) -> set[str]:
        return {r["after"] for r in self.rules} | {r["next"] for r in self.rules} | ({self.first} if self.first else set())

    def select(self, sel: Selection) -> Optional[str]:
        last = sel.last_speaker
        if last is None:
            return self.first or sel.names[0]
        text = (sel.messages[-1].content if sel.messages else "").lower()
        for rule in self.rules:
            if rule["after"] == last and (not rule.get("when") or str(rule["when"]).lower() in text):
                chosen: str = rule["next"]  # from_data checked it is a str
                return chosen
        return None


@attrs.define(repr=False)
class LLMSelector:
    """A model picks the next speaker from the roles' descriptions; ``None`` when it names nobody."""

    llm: Any
    prompt: str = LLM_PROMPT
    history_limit: int = 20

    async def aselect(self, sel: Selection) -> Optional[str]:
        roles = "\n".join(f"- {s.name}: {s.description or '(no description)'}" for s in sel.speakers)
        text = placeholders(self.prompt, SELECTOR_NAMES, "selection.prompt").render(dict(
            task=sel.task, roles=roles, names=", ".join(sel.names),
            transcript=render_transcript(sel.messages, limit=self.history_limit) or "(empty)"))
        request = self.llm.request(text, output_spec={"mode": "str", "fields": [
            {"name": "speaker", "type": "string", "description": "one of: " + ", ".join(sel.names)}]})
        reply = await self.llm.asend(request, sel.ctx)
        return match_name(reply.text, sel.names)


def match_name(text: str, names: Sequence[str]) -> Optional[str]:
    """The participant ``text`` names: an exact (case-insensitive) answer, else the name mentioned first."""
    cleaned = (text or "").strip().strip("\"'`*.!:").strip()
    for name in names:
        if cleaned.lower() == name.lower():
            return name
    found: list[tuple[int, int, str]] = []
    for name in names:
        m = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text or "", re.IGNORECASE)
        if m:
            found.append((m.start(), -len(name), name))
    return min(found)[2] if found else None


# -- choosing, with the safety nets ----------------------------------------------------


async def choose(selector: Any, sel: Selection, *, max_consecutive: Optional[int]) -> Choice:
    """Ask ``selector``; fall back to round-robin on no answer; break endless repeats."""
    try:
        proposed = await maybe_await(_call(selector, sel))
    except ProviderError:
        raise  # the provider already retried; every later round would fail the same way (and cost requests)
    except ZagentError as exc:  # a rail's denial, a reply naming no one usable: round-robin rather than a dead chat
        return _break_repeats(Choice(round_robin(sel), "fallback", None, f"{type(exc).__name__}: {exc}"),
                              sel, max_consecutive)
    if isinstance(proposed, str) and proposed not in sel.names:
        proposed_name = match_name(proposed, sel.names)
    else:
        proposed_name = proposed if isinstance(proposed, str) else None
    if proposed_name is None:
        choice = Choice(round_robin(sel), "fallback", proposed if isinstance(proposed, str) else None)
    else:
        choice = Choice(proposed_name, "policy", proposed_name)
    return _break_repeats(choice, sel, max_consecutive)


def _break_repeats(choice: Choice, sel: Selection, max_consecutive: Optional[int]) -> Choice:
    if max_consecutive is None or len(sel.names) < 2 or sel.consecutive(choice.speaker) < max_consecutive:
        return choice
    names = sel.names
    return Choice(names[(names.index(choice.speaker) + 1) % len(names)], "repeat_broken", choice.speaker)


def _call(selector: Any, sel: Selection) -> Any:
    for attr in ("aselect", "select"):
        fn = getattr(selector, attr, None)
        if callable(fn):
            return fn(sel)
    if callable(selector):
        return selector(sel)
    raise ConfigError(f"selector {selector!r} has no aselect/select method and is not callable")


# -- the registry -------------------------------------------------------------------


def _first(options: dict[str, Any]) -> Optional[str]:
    """``options["first"]``: a speaker's name or ``None``; anything else is a ``ConfigError``."""
    first = options.get("first")
    if first is not None and not isinstance(first, str):
        raise ConfigError(f"selection.first must be the name of a participant (text), got {type(first).__name__} "
                          f"{first!r:.60}")
    return first


def _round_robin_factory(options: dict[str, Any], kernel: "Kernel") -> RoundRobin:
    return RoundRobin(first=_first(options))


def _rules_factory(options: dict[str, Any], kernel: "Kernel") -> RoleRules:
    if "rules" not in options:
        raise ConfigError("selection policy 'rules' needs 'rules': {\"A\": \"B\", ...} or a list of rules")
    return RoleRules.from_data(options["rules"], first=_first(options))


def _llm_factory(options: dict[str, Any], kernel: "Kernel") -> LLMSelector:
    llm = options.get("llm")
    if llm is None or isinstance(llm, str):
        llm = kernel.llm(llm or options.get("model"))
    elif not callable(getattr(llm, "asend", None)):  # a spec's mapping or list: refused now, not at the first turn
        raise ConfigError(f"group chat selection 'llm' must be a 'provider:model' string (or an LLM object from "
                          f"Python), got {type(llm).__name__}; name the selector's model as a string")
    kw = {k: options[k] for k in ("prompt", "history_limit") if k in options}
    if not isinstance(kw.get("prompt", ""), str):
        raise ConfigError(f"selection.prompt must be text (with {{task}}, {{roles}}, {{transcript}}...), got "
                          f"{type(kw['prompt']).__name__}")
    placeholders(kw.get("prompt", LLM_PROMPT), SELECTOR_NAMES, "selection.prompt")  # checked now (ConfigError)
    return LLMSelector(llm=llm, **kw)


#: the keys of a ``selection`` mapping the built-in policies read (a plugin's policy may read more)
SPEC_KEYS = ("policy", "first", "rules", "llm", "model", "prompt", "history_limit")

BUILTIN: dict[str, Callable[[dict[str, Any], "Kernel"], Any]] = {
    "round_robin": _round_robin_factory, "rules": _rules_factory, "llm": _llm_factory,
}


def selector_factories(kernel: "Kernel") -> dict[str, Callable[[dict[str, Any], "Kernel"], Any]]:
    """The policies of ``kernel.entries("speaker_selectors")`` (the built-ins and those plugins register);
    only the built-ins on a kernel without the groupchat plugin."""
    from .hookspecs import KIND

    found = kernel.entries(KIND)
    return {e.name: e.obj for e in found} if found else dict(BUILTIN)


def build_selector(kernel: "Kernel", spec: Any) -> Any:
    """A selector from a policy name, a ``{"policy": ..., **options}`` mapping, an import path or an object."""
    if spec is None:
        spec = {"policy": "round_robin"}
    if isinstance(spec, str):
        spec = {"policy": spec}
    if not isinstance(spec, dict):
        return spec  # already a selector object or callable
    options = dict(spec)
    policy = options.get("policy", "round_robin")
    if isinstance(policy, (dict, list, tuple, int, float)):  # data (a spec file's): never taken as a selector
        raise ConfigError(f"selection.policy must be a policy name (round_robin, rules, llm) or an import path "
                          f"'package.module:factory', got {type(policy).__name__} {policy!r:.60}")
    if not isinstance(policy, str):
        return policy
    if ":" in policy:
        from zagent.speckit.trust import resolve

        factory = resolve(policy, key="speaker selection policy", kernel=kernel)
    else:
        factories = selector_factories(kernel)
        factory = factories.get(policy)
        if factory is None:
            raise ConfigError(f"unknown speaker selection policy {policy!r}; known: {', '.join(sorted(factories))}, "
                              "or an import path 'package.module:factory'")
    return factory(options, kernel)


def check_names(selector: Any, speakers: Sequence[str]) -> None:
    """Refuse rules (or a ``first``) naming someone who is not in the chat."""
    named = set(selector.names()) if callable(getattr(selector, "names", None)) else set()
    first = getattr(selector, "first", None)
    if isinstance(first, str):
        named.add(first)
    unknown = sorted(named - set(speakers))
    if unknown:
        raise ConfigError(f"speaker selection names {', '.join(unknown)}, who {'is' if len(unknown) == 1 else 'are'} "
                          f"not in the chat; participants: {', '.join(speakers)}")
