"""``Kernel.llm`` behind the facade: a ``"provider:model"`` string to a cached ``Model``, its factory run inside
``building(stash)`` (``shared_stash()`` is then the kernel's stash). A model name the user chose is a
``UsersModel``; the options of a model a spec names go through the check in force (``checking_options``,
which ``zagent.speckit.paths`` sets).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional

from ..errors import ConfigError
from .._runs.logs import log
from .._registry.lookups import build, cache_key, names
from .._registry.registries import Registry
from .llm import LLM
from .run import Model

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.stash import Stash
    from ..kernel import Kernel

#: ``check(factory, spec, options, kernel)`` run on the options of every model made while it is in force
OptionCheck = Callable[[Optional[Callable[..., Any]], str, Mapping[str, Any], "Optional[Kernel]"], None]

FALLBACK_MODEL = "test:offline"
MAX_MODELS = 256  # models one kernel holds (config "max_models")
_building: "ContextVar[Optional[Stash]]" = ContextVar("zagent._model.resolve.building", default=None)
_check: "ContextVar[Optional[OptionCheck]]" = ContextVar("zagent_option_check", default=None)


class UsersModel(str):
    """A ``provider:model`` name the user chose (``--model``, an app's ``llm=``), never one from a spec file."""

    __slots__ = ()


@contextmanager
def checking_options(check: OptionCheck) -> Iterator[None]:
    """Models made inside the block have their options checked by ``check`` before their factory runs."""
    token = _check.set(check)
    try:
        yield
    finally:
        _check.reset(token)


def shared_stash() -> "Optional[Stash]":
    """The stash of the kernel whose model factory is building a model now (``None`` outside a build)."""
    return _building.get()


@contextmanager
def building(stash: "Stash") -> Iterator[None]:
    """Run a provider factory with ``shared_stash()`` set to ``stash``."""
    token = _building.set(stash)
    try:
        yield
    finally:
        _building.reset(token)


class Models:
    """The models one kernel made, by spec and options."""

    def __init__(self, config: dict[str, Any], registries: dict[str, Registry]) -> None:
        self.config, self.registries = config, registries
        self.llms: dict[Any, Model] = {}
        self._warned_fallback = False

    def get(self, owner: Any, spec: Optional[str], options: dict[str, Any]) -> Model:
        """See ``Kernel.llm``; the new model is bound to ``owner`` (the kernel)."""
        if spec is not None and not isinstance(spec, str):
            raise ConfigError(f"a model is named by a 'provider:model' string, got {type(spec).__name__} "
                              f"{short_repr(spec)}")
        if not spec:  # the app's or the user's default, never a spec's: its wrapper's default file is theirs
            spec = UsersModel(self.config.get("model") or os.environ.get("ZAGENT_MODEL") or self._fallback_model())
        check = _check.get()  # a model an untrusted spec names: its paths stay in its folder (zagent.speckit)
        if check is not None:
            check(self.registries["providers"].get(spec.partition(":")[0]), spec, options, owner)
        key = cache_key(spec, options)
        if key is not None and check is not None:  # a spec's model is made (and its options checked) apart from
            key = (check, key)  # one the app or a trusted spec made with the same options (docs/security.md, 2)
        if key is not None and key in self.llms:
            return self.llms[key]
        most = self.config.get("max_models") or MAX_MODELS
        if len(self.llms) >= most:  # each holds an HTTP client: options a spec chooses must not add them for ever
            raise ConfigError(f"model {spec[:200]!r} was not made: this kernel already holds {len(self.llms)} models "
                              f"(at most {most}; one per model name and options, spec files' apart). Reuse model "
                              "settings, close the kernel, or raise Kernel config 'max_models'")
        provider, sep, model = spec.partition(":")
        if not sep or not provider:
            raise ConfigError(
                f"model {spec!r} has no provider prefix; write it as 'provider:model', e.g. 'openai:{spec}'. "
                f"Installed providers: {names(self.registries, 'providers')}"
            )
        factory = self.registries["providers"].get(provider)
        if factory is None:
            raise ConfigError(
                f"unknown LLM provider {provider!r} in {spec!r}. Installed providers: "
                f"{names(self.registries, 'providers')}. "
                "Fix the name, or install the plugin that provides it from a publisher you trust (the name may come "
                "from a spec file: no package is suggested for it)"
            )
        profiles = self.config.get("profiles") or {}
        overrides = {**profiles.get(f"{provider}:*", {}), **profiles.get(f"{provider}:{model}", {})}
        profile = options.pop("profile", None) or {}
        if not isinstance(profile, dict):
            raise ConfigError(f"model {spec!r}: profile must be a mapping of capability fields, "
                              f"got {type(profile).__name__}")
        overrides.update(profile)
        overrides.update(self.config.get("profile") or {})  # for every model, over the rest (the CLI's --profile)
        with building(owner.stash):
            llm: LLM = build(factory, f"model {spec!r}", model, **options)  # a provider's factory makes an LLM
        if isinstance(llm, Model):  # a factory that returned another model of the kernel (k.llm(...))
            llm = llm.llm
        if not isinstance(llm, LLM):
            raise ConfigError(f"the {provider!r} provider's factory returned {type(llm).__name__} "
                              f"{short_repr(llm)}, not a zagent.LLM; fix the plugin that registers {provider!r}")
        if overrides:
            llm.profile_overrides = {**llm.profile_overrides, **overrides}
        bound = Model(llm, owner)
        self.llms[key if key is not None else id(bound)] = bound
        return bound

    def _fallback_model(self) -> str:
        if not self._warned_fallback:
            self._warned_fallback = True
            log.info("ZAGENT_MODEL is not set: using the offline test model %r (no network). "
                        "Set ZAGENT_MODEL=provider:model to use a real LLM.", FALLBACK_MODEL)
        return FALLBACK_MODEL

    async def aclose(self) -> None:
        """Close every LLM made (errors logged) and forget them."""
        for llm in list(self.llms.values()):
            try:
                await llm.aclose()
            except Exception as exc:
                from .._trust.secrets import mask_exception
                from .._trust.settings import config_masker

                masker = config_masker(self.config)  # a provider plugin quoting the key the app gave it
                mask_exception(exc, masker)
                log.exception("closing %s failed", masker(repr(llm)))
        self.llms.clear()


def short_repr(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (for error messages)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
