"""Record real exchanges to JSONL and replay them offline: any real run becomes a deterministic test.

``record:<provider>:<model>`` appends each call, secrets masked, to ``path`` (emptied at the first call; a file that
is not a recording is refused); ``replay:<name>`` answers from it in order with the recorded profile, raising
``ConfigError`` for a request unlike its record (unless ``match="order"``) or a call too many. Without ``path=`` both
use ``default_path(model)``.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, AsyncIterator, Optional

import attrs
import msgspec

from zagent import errors
from zagent.errors import ConfigError
from zagent import LLM
from zagent.providerkit import ProviderLLM
from zagent.types import Chunk, Completion, LLMRequest, Message, ModelProfile

from .common import completion_chunks, ordinal

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

# credential-like option keys; ``token`` only as a whole word or suffix (``access_token``), so
# ``max_tokens``/``max_completion_tokens`` stay readable
_SECRET_KEY = re.compile(r"(api[_-]?key|authorization|secret|password|cookie|(?:^|[_-])token$)", re.I)
_encoder = msgspec.json.Encoder()


def strip_secrets(value: Any) -> Any:
    """A copy of ``value`` with credential-like keys masked (``_SECRET_KEY`` or ``looks_secret``: ``private_key``,
    ``credentials``, ``passphrase``), at any depth."""
    if isinstance(value, dict):
        return {k: "***" if isinstance(k, str) and _secret_key(k) else strip_secrets(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strip_secrets(v) for v in value]
    return value


def _secret_key(key: str) -> bool:
    from zagent.agentkit.secrets import looks_secret

    return bool(_SECRET_KEY.search(key)) or looks_secret(key)


def _pieces_masked(value: Any, secrets: Any) -> Any:
    """A copy of ``value`` (built-in data) with each text ``mask_pieces``'d: a server echoing a key upper-cased, cut
    short or as a hex dump into a reply (the whole-value ``Masker`` misses those). Without recursion."""
    from zagent.providerkit.masking import mask_pieces

    def copy(item: Any) -> Any:
        return dict(item) if isinstance(item, dict) else list(item) if isinstance(item, list) else item

    top = copy(value)
    todo = [top] if isinstance(top, (dict, list)) else []
    while todo:
        node = todo.pop()
        for key in list(node.keys() if isinstance(node, dict) else range(len(node))):
            item = node[key]
            if isinstance(item, str) and len(item) >= 6:
                node[key] = mask_pieces(item, secrets)
            elif isinstance(item, (dict, list)):
                node[key] = copy(item)
                todo.append(node[key])
    return top


def _masker_of(llm: Any) -> Any:
    """The secrets masker of the wrapped model and of every model inside it (a ``fallback:`` chain's, a wrapper's
    ``inner``): API keys and secret headers, even when a server echoes them."""
    from zagent.agentkit.secrets import Masker

    values: list[str] = []
    todo, seen = [llm], set()
    while todo:
        model = todo.pop()
        if id(model) in seen:
            continue
        seen.add(id(model))
        http = getattr(model, "http", None)
        if http is not None and hasattr(http, "masker"):
            values.extend(http.masker().values)
        todo.extend(m for m in (getattr(model, "models", None) or ()) if isinstance(m, LLM))
        inner = getattr(model, "inner", None)
        if isinstance(inner, LLM):
            todo.append(inner)
    return Masker(values)


@attrs.define(repr=False, eq=False, kw_only=True)
class RecordLLM(LLM):
    """Passes calls to ``inner`` and appends each exchange to ``path``."""

    inner: LLM
    path: str
    _started: bool = attrs.field(default=False, init=False)
    _masker: Any = attrs.field(default=None, init=False)

    @classmethod
    def build(cls, kernel: "Kernel", model: str, *, path: Optional[str] = None, **options: Any) -> "RecordLLM":
        if ":" not in model:
            raise ConfigError(f"record:{model}: name the model to record as provider:model, e.g. record:openai:gpt-4o-mini")
        inner = kernel.llm(model, **options).llm  # the provider's model: the record call has the rails
        return cls(provider="record", model=model, inner=inner, path=str(path or default_path(model)))

    def default_profile(self) -> ModelProfile:
        return self.inner.profile

    def _inner_request(self, request: LLMRequest) -> LLMRequest:
        """``request`` as the wrapped model sends it: its own model name (``gpt-4o-mini``, never
        ``openai:gpt-4o-mini``) on the wire."""
        if request.model == self.model:
            return msgspec.structs.replace(request, model=self.inner.model)
        return request

    async def _acomplete(self, request: LLMRequest) -> Completion:
        request = self._inner_request(request)
        try:
            completion = await self.inner._send(request)
        except errors.ProviderError as exc:
            self._write(request, False, error=exc)
            raise
        self._write(request, False, completion=completion)
        return completion

    async def _astream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        request = self._inner_request(request)
        agen = self.inner._send_stream(request)
        try:
            async for chunk in agen:
                if chunk.type == "done" and chunk.completion is not None:
                    self._write(request, True, completion=chunk.completion)
                yield chunk
        except errors.ProviderError as exc:
            self._write(request, True, error=exc)
            raise
        finally:
            await agen.aclose()

    def _write(self, request: LLMRequest, stream: bool, *, completion: Optional[Completion] = None,
               error: Optional[BaseException] = None) -> None:
        entry: dict[str, Any] = {"model": self.model, "stream": stream,
                                 "request": strip_secrets(msgspec.to_builtins(request)),
                                 "profile": msgspec.to_builtins(self.profile)}
        if completion is not None:
            entry["completion"] = msgspec.to_builtins(completion)
        else:
            entry["error"] = {"type": type(error).__name__, "message": str(error),
                              "status": getattr(error, "status", None)}
        if self._masker is None:
            self._masker = _masker_of(self.inner)
        if self._masker:
            entry = _pieces_masked(entry, self._masker.values)
        line = self._masker(_encoder.encode(entry).decode())
        if request.options:  # a secret option given to this call only, echoed in the reply or error
            from zagent.providerkit.masking import mask, option_secrets

            line = mask(line, option_secrets(request.options))
        from zagent.agentkit.privatefiles import open_private

        if self._started:
            fd = open_private(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)  # 0600, no foreign symlink followed
        else:  # started afresh, but never over a file that is not a recording (a spec may name any .jsonl)
            fd = open_private(self.path, os.O_RDWR | os.O_CREAT)
            try:
                _check_recording(fd, self.path)
                os.ftruncate(fd, 0)
                os.lseek(fd, 0, os.SEEK_SET)
            except BaseException:
                os.close(fd)
                raise
        with open(fd, "w", encoding="utf-8") as f:
            f.write(line + "\n")
        self._started = True

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __repr__(self) -> str:
        return f"<RecordLLM {self.model} -> {self.path}>"


#: how a line ``record:`` writes starts: ``{"model":"...","stream":false,"request":`` (spaces allowed, ``stream``
#: may be left out); a line with a ``model`` key and no ``request`` next (``{"model": "x", "score": 1}``) is not one
RECORDING_START = re.compile(rb'\s*\{\s*"model"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*(?:"stream"\s*:\s*(?:true|false)\s*,\s*)?'
                             rb'"request"\s*:')


def _check_recording(fd: int, path: str) -> None:
    """``ConfigError`` unless the file open as ``fd`` is empty or starts like a line ``record:`` writes (a JSONL file
    of the user's whose lines merely start with a ``model`` key, results or a dataset, is not one)."""
    head = os.read(fd, 4096)
    if head.strip() and not RECORDING_START.match(head):
        raise ConfigError(f"{path!r} already holds something that is not a recording of record:, so it is not "
                          "overwritten; give record: a path of its own (a new file, or an earlier recording) or "
                          "remove that file")


class Record(msgspec.Struct):
    request: LLMRequest
    model: str = ""
    stream: bool = False
    completion: Optional[Completion] = None
    error: Optional[dict[str, Any]] = None
    profile: Optional[ModelProfile] = None


@attrs.define(repr=False, eq=False, kw_only=True)
class ReplayLLM(ProviderLLM):
    """Answers from recorded exchanges, in order, checking each request against the record."""

    path: str
    records: list[Record]
    match: str = "request"
    calls: int = 0

    @classmethod
    def build(cls, model: str, *, path: Optional[str] = None, match: str = "request", **options: Any) -> "ReplayLLM":
        if options:
            raise ConfigError(f"replay:{model} got unknown options {sorted(options)}; it accepts path= and match=")
        path = path or default_path(model)
        if match not in ("request", "order"):
            raise ConfigError(f"replay match={match!r}: use 'request' (check each request) or 'order'")
        return cls(provider="replay", model=model, path=str(path), records=load(str(path)), match=match)

    def default_profile(self) -> ModelProfile:
        """The recorded model's profile (so agents choose the same strategies as when recording)."""
        recorded = next((r.profile for r in self.records if r.profile is not None), None)
        return recorded or ModelProfile()

    async def _wire_complete(self, request: LLMRequest) -> Completion:
        return self._answer(request)

    async def _wire_stream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        for chunk in completion_chunks(self._answer(request)):
            yield chunk

    def _answer(self, request: LLMRequest) -> Completion:
        self.calls += 1
        if self.calls > len(self.records):
            raise ConfigError(
                f"{self.path} holds {len(self.records)} recorded calls but a {ordinal(self.calls)} call was made; "
                "the code now calls the model more often than when it was recorded: record again")
        record = self.records[self.calls - 1]
        if self.match == "request":
            difference = compare(record.request, request)
            if difference:
                raise ConfigError(
                    f"{ordinal(self.calls)} call does not match {self.path}: {difference}. The code or its "
                    "inputs changed since recording: record again, or replay with match='order'")
        if record.error is not None:
            raise _error_of(record.error)
        return record.completion or Completion(message=Message(role="assistant"))

    def __repr__(self) -> str:
        return f"<ReplayLLM {self.path} calls={self.calls}/{len(self.records)}>"


def default_path(model: str) -> str:
    """Where ``record:MODEL`` writes and ``replay:MODEL`` reads without ``path=`` (so both work from ``--model``):
    ``$ZAGENT_RECORDINGS`` or ``$XDG_DATA_HOME/zagent/recordings``, a file named after the model."""
    from zagent.agentkit.privatefiles import users_path

    folder = users_path("ZAGENT_RECORDINGS", "recordings")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip(".-") or "model"
    return os.path.join(folder, name[:120] + ".jsonl")


#: Bytes of a recording ``replay:`` reads at most (a spec can name the file: a bound on what it makes zagent read).
MAX_RECORDING_BYTES = 64 * 2**20


def load(path: str) -> list[Record]:
    """The records of a JSONL file written by ``record:``."""
    from zagent.agentkit.privatefiles import open_private

    try:
        with open(open_private(path, os.O_RDONLY, reading=True), "rb") as f:
            raw = f.read(MAX_RECORDING_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read the recording {path!r}: {exc}; record it first with record:provider:model") from None
    if len(raw) > MAX_RECORDING_BYTES:
        raise ConfigError(f"the recording {path!r} is larger than {MAX_RECORDING_BYTES // 2**20} MiB, more than a "
                          "recording of a test run holds; zagent does not read it. Record a shorter run, or split it")
    lines = [line for line in raw.splitlines() if line.strip()]
    decoder = msgspec.json.Decoder(Record)
    records = []
    for n, line in enumerate(lines, 1):
        try:
            records.append(decoder.decode(line))
        except msgspec.DecodeError as exc:
            raise ConfigError(f"{path}:{n} is not a zagent recording line ({exc})") from None
    return records


def _summary(request: LLMRequest) -> dict[str, Any]:
    return {
        "messages": [(m.role, m.content or "", [(c.name, c.arguments) for c in m.tool_calls], m.tool_call_id or "")
                     for m in request.messages],
        "tools": [t.name for t in request.tools],
        "response_format": request.response_format,
    }


def compare(recorded: LLMRequest, actual: LLMRequest) -> str:
    """How ``actual`` differs from ``recorded`` (empty when it matches)."""
    a, b = _summary(recorded), _summary(actual)
    if a["tools"] != b["tools"]:
        return f"tools offered were {a['tools']}, now {b['tools']}"
    if a["response_format"] != b["response_format"]:
        return "response_format differs"
    if len(a["messages"]) != len(b["messages"]):
        return f"recorded {len(a['messages'])} messages, now {len(b['messages'])}"
    for i, (x, y) in enumerate(zip(a["messages"], b["messages"])):
        if x != y:
            return f"message {i} differs: recorded {_short(x)}, now {_short(y)}"
    return ""


def _short(message: tuple[str, str, list[tuple[str, Any]], str]) -> str:  # role, content, calls, call id
    role, content, calls, _ = message
    text = content if len(content) <= 60 else content[:57] + "..."
    return f"{role} {text!r}" + (f" calls {[c[0] for c in calls]}" if calls else "")


def _error_of(data: dict[str, Any]) -> Exception:
    cls = getattr(errors, str(data.get("type")), None)
    if not (isinstance(cls, type) and issubclass(cls, errors.ProviderError)):
        cls = errors.ProviderError
    message = f"(replayed) {data.get('message', '')}"
    try:
        return cls(message, status=data.get("status"))
    except TypeError:
        return errors.ProviderError(message, status=data.get("status"))
