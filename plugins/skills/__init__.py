"""The skills plugin: agents learn reusable skills from their own successful runs (docs/skills.md).

``skills_for(kernel)`` gives a kernel's ``Skills``; the hooks inject a matched skill into runs with skills
enabled, curate completed runs when configured, and add ``zagent skills``. Cheap to import: all loads on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zagent.agentkit.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover  (the lazy names' types, for type checkers)
    from zagent import LLMRequest, RunContext
    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup

    from .curator import CurationResult as CurationResult, Curator as Curator
    from .index import SkillIndex as SkillIndex
    from .lifecycle import LifecycleManager as LifecycleManager
    from .matcher import Match as Match, SkillMatcher as SkillMatcher
    from .registry import SkillRegistry as SkillRegistry
    from .runtime import Skills as Skills, skills_for as skills_for
    from .skill import Skill as Skill, Transition as Transition
    from .writer import SkillWriter as SkillWriter

_EXPORTS = {
    "Skill": "skill", "Transition": "skill", "SkillRegistry": "registry", "SkillIndex": "index",
    "SkillMatcher": "matcher", "Match": "matcher", "LifecycleManager": "lifecycle", "Curator": "curator",
    "CurationResult": "curator", "SkillWriter": "writer", "Skills": "runtime", "skills_for": "runtime",
}

__all__ = ["CurationResult", "Curator", "LifecycleManager", "Match", "Skill", "SkillIndex", "SkillMatcher",
           "SkillRegistry", "SkillWriter", "Skills", "Transition", "skills_for"]


__getattr__ = lazy_exports(__name__, _EXPORTS)


#: the hook specs this plugin owns (``zagent_register_skills``); the kernel adds them first
zagent_hookspecs = "zagent.plugins.skills.hookspec"


def zagent_config_keys() -> tuple[str, ...]:
    """The settings this plugin reads: ``skills`` (the kernel's, and an agent's switch)."""
    return ("skills",)


def zagent_kernel_start(kernel: "Kernel") -> None:
    """Add the ``run_end`` observer when the kernel config enables skills (otherwise on a run's first use of one)."""
    if (kernel.config.get("skills") or {}).get("enabled"):
        from .runtime import observe

        observe(kernel)


def zagent_before_llm_call(request: LLMRequest, ctx: "RunContext[Any]") -> Any:
    """Add the matched skill's instructions to requests of runs with skills enabled (an awaitable then)."""
    if not ctx.agent_config.get("skills") and not (ctx.kernel.config.get("skills") or {}).get("enabled"):
        return None  # the common case: two dict look-ups, no coroutine
    from .runtime import use_in_request

    return use_in_request(request, ctx)


def zagent_run_end(result: Any, ctx: "RunContext[Any]") -> None:
    """Automatic curation (Agent-Z's ``enable_curator``): a completed ReAct run is curated in the background
    when ``kernel.config["skills"]["curate_after_run"]`` or the agent's ``agent_config["skills"]["curate"]`` is on."""
    conf = ctx.kernel.config.get("skills") or {}
    agent = ctx.agent_config.get("skills") if ctx.agent_config else None
    wanted = (agent.get("curate") if isinstance(agent, dict) else None)
    if wanted is None:
        wanted = conf.get("curate_after_run")
    if not wanted or getattr(result, "status", None) != "completed" or getattr(result, "state", None) is None:
        return
    if getattr(result, "questions", None):  # it ended asking the user something: nothing learnt yet
        return
    from .runtime import skills_for

    skills_for(ctx.kernel).curate_soon(result, conf.get("curator_model"))


def zagent_kernel_close(kernel: "Kernel") -> None:
    import sys

    runtime = sys.modules.get(f"{__name__}.runtime")
    if runtime is not None:
        runtime.forget(kernel)


def zagent_register_commands(cli: "CommandGroup", kernel: "Kernel") -> None:
    from .cli import add_commands

    add_commands(cli)
