"""Field specs, the public face of ``fieldspec`` (declarations compiled once: ``compile_fields``, ``normalize``,
``json_schema``, ``describe``) and ``fieldconvert`` (replies converted laxly: ``convert``, ``to_dict``,
``coerce_text``). A declaration is ``Field`` objects or plain dicts; the type aliases
``str/int/float/bool/dict/list``, ``text`` and ``json`` are accepted. ``convert``, ``json_schema`` and ``describe``
take a declaration or its compiled ``FieldSpec``.
"""

from __future__ import annotations

from .fieldconvert import coerce_text, convert, to_dict
from .fieldspec import TYPES, FieldsIn, FieldSpec, compile_fields, describe, json_schema, normalize

__all__ = [
    "FieldSpec", "FieldsIn", "TYPES", "compile_fields", "convert", "describe", "json_schema",
    "normalize", "to_dict", "coerce_text",
]
