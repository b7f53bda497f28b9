"""``zagent.hookspecs``: the hook specifications, the whole extension surface of zagent, with the markers
(``hookimpl``, ``hookspec``, ``PROJECT``), re-exported from ``zagent._hooks.specs``. How the kernel calls
registration hooks, rails and events, and the hooks plugins may own: docs/hooks.md.
"""

from __future__ import annotations

from ._hooks.specs import PROJECT as PROJECT
from ._hooks.specs import asks_humans as asks_humans
from ._hooks.specs import hookimpl as hookimpl
from ._hooks.specs import hookspec as hookspec
from ._hooks.specs import zagent_check_config as zagent_check_config
from ._hooks.specs import zagent_config_keys as zagent_config_keys
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
