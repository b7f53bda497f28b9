"""The skills plugin: agents that learn reusable skills from their own successful runs.

* ``Skill`` (msgspec) and ``SkillRegistry``: a folder of human-editable
  Markdown files (``<name>.md``), indexed in SQLite (FTS5), plus skills other
  plugins register through the hook ``zagent_register_skills(register)``
  into ``kernel.entries("skills")`` (``hookspec.py``, declared as this
  plugin's ``zagent_hookspecs``: a ``registry_hookspec``);
* ``SkillMatcher``: keyword (BM25-style weights), embeddings when an embedder
  is installed, optional LLM re-rank; best match above a threshold or none;
* ``LifecycleManager``: idle → active → stale → archived, every change recorded;
* ``Curator``: judges recorded trajectories with the model (JSON mode) and
  writes new skills or improves the closest one (``SkillWriter``: atomic
  files; a person's edits are kept as ``<name>.v<N>.md``);
* at run time, through the kernel's ``zagent_before_llm_call`` rail, runs with
  skills enabled get the matched skill's instructions as a system message;
  a ``zagent_event`` observer, added to a kernel the first time one of its
  runs uses a skill, counts successes on ``run_end`` (``runtime.py``);
* automatic curation (``zagent_run_end``): with ``curate_after_run`` in the
  kernel's ``skills`` config (or ``{"skills": {"curate": true}}`` in an agent's
  config), every completed ReAct run is curated in the background by
  ``curator_model`` (default: the kernel's model);
* ``zagent skills list|show|match|curate|archive|activate|sweep|history``.

``skills_for(kernel)`` gives a kernel's registry, matcher and lifecycle. See
docs/skills.md. Built on the react plugin (trajectory format, tokenizer) and
the actions plugin (CustomizeAgent in JSON mode for the Curator). Cheap to
import: everything loads on first use.
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
