"""Hook specifications: the whole extension surface of zagent.

A plugin is any module, class or instance with functions named after these
hooks (``zagent_*``). The ``@zagent.hookimpl`` marker is optional; it is only
needed for ``tryfirst``/``trylast``. An implementation may accept any *subset*
of a hook's parameters, by name, and must never give a parameter a default
(pluggy would not pass it).

How the kernel calls hooks (pluggy has no async, so zagent settles it):

* **Registration hooks** (``zagent_register_*``) are plain functions, called
  once per ``Kernel`` when it starts (or when ``Kernel.add_plugin`` adds a
  plugin later). Each receives a ``register`` callable bound to the calling
  plugin, so clashes name both plugins. Names are unique per kind; a second
  registration of a name is an error unless it passes ``override=True``.
* **Rails** (``zagent_before_*`` / ``zagent_after_*``) run one after another
  in pluggy order (``tryfirst`` first, then last-registered first, then
  ``trylast``). Each sees the result of the ones before it, so rewrites
  compose. An implementation may return a value or an awaitable; the kernel
  awaits it. A rail that raises denies the call (fail closed) and the reason
  names the rail.
* **Events** (``zagent_event``): every implementation runs; awaitables are
  awaited; return values are ignored; an exception in an observer is logged
  and never breaks a run.

Plugins may own extension points too: a plugin with an attribute
``zagent_hookspecs`` (a module, a class or an import path holding
``@hookspec`` functions) has those specs added before any plugin's hooks are
checked, so implementations of them load in any order. A spec marked
``@zagent.registry_hookspec(kind, noun=...)`` also declares a
registry kind, ``kernel.registries[kind]``, filled with the kernel's clash
checks (the groupchat plugin's ``zagent_register_speaker_selectors`` is one).

Argument types live in ``zagent.types`` (data) and ``zagent._runs.context``
(``RunContext``); rails answer with ``zagent.Deny`` / ``zagent.Rewrite``.
"""

from __future__ import annotations

from ._hooks.specs import PROJECT as PROJECT
from ._hooks.specs import hookimpl as hookimpl
from ._hooks.specs import hookspec as hookspec
from ._hooks.specs import zagent_check_config as zagent_check_config
from ._hooks.specs import zagent_check_input as zagent_check_input
from ._hooks.specs import zagent_check_output as zagent_check_output
from ._hooks.specs import zagent_event as zagent_event
from ._hooks.specs import zagent_kernel_close as zagent_kernel_close
from ._hooks.specs import zagent_kernel_start as zagent_kernel_start
from ._hooks.specs import zagent_run_end as zagent_run_end
from ._hooks.specs import zagent_after_llm_call as zagent_after_llm_call
from ._hooks.specs import zagent_after_tool_call as zagent_after_tool_call
from ._hooks.specs import zagent_before_llm_call as zagent_before_llm_call
from ._hooks.specs import zagent_before_tool_call as zagent_before_tool_call
from ._hooks.specs import zagent_register_agent_types as zagent_register_agent_types
from ._hooks.specs import zagent_register_agent_builders as zagent_register_agent_builders
from ._hooks.specs import zagent_register_batch_drivers as zagent_register_batch_drivers
from ._hooks.specs import zagent_register_commands as zagent_register_commands
from ._hooks.specs import zagent_register_embedders as zagent_register_embedders
from ._hooks.specs import zagent_register_executors as zagent_register_executors
from ._hooks.specs import zagent_register_memory as zagent_register_memory
from ._hooks.specs import zagent_register_parsers as zagent_register_parsers
from ._hooks.specs import zagent_register_providers as zagent_register_providers
from ._hooks.specs import zagent_register_tools as zagent_register_tools
