"""zagent: an embeddable micro-kernel for LLM agents. ``Kernel`` loads plugins (entry-point group ``zagent``) and
answers look-ups; ``__all__``, ``zagent.hookspecs``, ``zagent.errors``, ``zagent.types``, the kits and
``zagent.testing`` are the public surface (docs/architecture.md, PUBLIC). Importing it loads only the standard
library, pluggy, attrs and msgspec; asyncio and httpx load on first use.
"""

from . import _trust  # noqa: F401  (first: `python -m zagent` imports nothing from the working folder)
from ._registry.registries import registry_hookspec
from ._runs.context import RunContext, interrupt
from ._runs.spans import current_span_id
from ._runs.stash import StashKey
from ._tools.tool import ArgumentsError
from ._trust.secrets import mask_userinfo
from .errors import (AuthenticationError, BadRequestError, CheckpointError, ConfigError, DeadlineExceeded,
                     GuardrailTripped, Interrupted, NoAnswerError, NotFoundError, ParseError, PluginError,
                     ProtocolError, ProviderConfigError, ProviderError, ProviderTimeout, RateLimitError, Refusal,
                     ResponseTooLarge, RunAborted, RunStopped, StreamInterrupted, ToolBlocked, ToolError,
                     UsageLimitExceeded, ZagentError)
from .hookspecs import hookimpl
from .kernel import Kernel
from ._hooks.loading import PluginInfo, PluginProblem
from ._model.llm import LLM
from ._model.run import Model
from ._hooks.specs import Deny, Rewrite
from ._trust.secrets import Secret
from ._runs.sync import run_sync
from ._tools.tool import Tool, tool
from .types import (Chunk, Completion, Event, Field, LLMRequest, Message, ModelProfile, Part, ToolCall, ToolResult,
                    ToolSpec, Usage)

__version__ = "0.1.0"

__all__ = [
    "AuthenticationError", "Chunk", "Completion", "ConfigError", "Deny", "Event", "Field", "Kernel", "LLM",
    "LLMRequest", "Message", "Model", "ModelProfile", "NoAnswerError", "Part", "ParseError", "PluginError", "PluginInfo",
    "PluginProblem", "ProviderError", "ProviderTimeout", "RateLimitError", "Refusal", "Rewrite", "RunAborted", "RunContext",
    "Secret", "StreamInterrupted", "Tool", "ToolBlocked", "ToolCall", "ToolError", "ToolResult", "ToolSpec",
    "Usage", "ZagentError", "hookimpl", "run_sync", "tool",
]
__all__ += ["BadRequestError", "CheckpointError", "DeadlineExceeded", "NotFoundError", "ProtocolError",
            "ProviderConfigError", "ResponseTooLarge"]
__all__ += ["GuardrailTripped", "Interrupted", "RunStopped", "UsageLimitExceeded", "interrupt"]
__all__ += ["ArgumentsError", "StashKey", "current_span_id", "mask_userinfo", "registry_hookspec"]
