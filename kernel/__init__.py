"""zagent: an embeddable micro-kernel for LLM agents.

The kernel defines hook specifications (``zagent.hookspecs``) for LLM
providers, output parsers, tools, memory and rails, and a ``Kernel`` that
loads plugins and answers look-ups. Agents, loops, workflows and the CLI are
plugins (``zagent.plugins``), found through the ``zagent`` entry-point group.

Importing this package loads only the standard library, pluggy, attrs and
msgspec; asyncio and httpx are imported on first use.
"""

from ._runs.context import RunContext, interrupt
from .errors import (
    AuthenticationError,
    CheckpointError,
    ConfigError,
    NoAnswerError,
    ParseError,
    PluginError,
    ProviderError,
    ProviderTimeout,
    RateLimitError,
    Refusal,
    RunAborted,
    StreamInterrupted,
    ToolBlocked,
    ToolError,
    ZagentError,
)
from .errors import GuardrailTripped, Interrupted, RunStopped, UsageLimitExceeded
from .errors import BadRequestError, DeadlineExceeded, NotFoundError, ProtocolError, ProviderConfigError, ResponseTooLarge
from .hookspecs import hookimpl
from .kernel import Kernel
from ._hooks.loading import PluginInfo, PluginProblem
from ._model.llm import LLM
from ._model.run import Model
from ._hooks.rails import Deny, Rewrite
from ._trust.secrets import Secret
from ._runs.sync import run_sync
from ._tools.tool import Tool, tool
from .types import (
    Chunk,
    Completion,
    Event,
    Field,
    LLMRequest,
    Message,
    ModelProfile,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)

__version__ = "0.1.0"

__all__ = [
    "AuthenticationError", "Chunk", "Completion", "ConfigError", "Deny", "Event", "Field", "Kernel", "LLM",
    "LLMRequest", "Message", "Model", "ModelProfile", "NoAnswerError", "ParseError", "PluginError", "PluginInfo",
    "PluginProblem", "ProviderError", "ProviderTimeout", "RateLimitError", "Refusal", "Rewrite", "RunAborted", "RunContext",
    "Secret", "StreamInterrupted", "Tool", "ToolBlocked", "ToolCall", "ToolError", "ToolResult", "ToolSpec",
    "Usage", "ZagentError", "hookimpl", "run_sync", "tool",
]
__all__ += ["BadRequestError", "CheckpointError", "DeadlineExceeded", "NotFoundError", "ProtocolError",
            "ProviderConfigError", "ResponseTooLarge"]
__all__ += ["GuardrailTripped", "Interrupted", "RunStopped", "UsageLimitExceeded", "interrupt"]
