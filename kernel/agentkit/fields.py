"""Field specs: normalise ``zagent.Field`` declarations, build typed result Structs, convert and describe.

One declaration of an action's inputs or outputs drives the prompt (``describe``,
``json_schema``) and the parse (``convert``). Declarations may be ``Field``
objects or plain dicts (``{"name": "answer", "type": "string", "required": True}``);
type aliases ``str/int/float/bool/dict/list`` (and ``text``, ``json``) are accepted.

``compile_fields(decl)`` does the per-spec work once and caches it: the
normalised ``Field`` tuple, the ``msgspec.defstruct`` result type (nested objects
become nested Structs, arrays get their ``items`` type) and the JSON schema.
Everything else here takes either a declaration or the compiled ``FieldSpec``.

Conversion is lax the way a user expects: ``"42"`` becomes 42 for an integer
field (``"3.5"`` does not), ``"true"``/``"yes"`` become booleans, a number
given for a string field becomes its text, and an array or object field given
as JSON text is decoded. Missing required fields and invalid values raise one
``ParseError`` naming all of them and keeping the raw text.

This module imports only the standard library, msgspec and the kernel's own
``types``/``errors``; it must stay cheap to import and free of plugin code.

The work is split by job: ``fieldspec`` (declarations, compiled specs, schema,
description) and ``fieldconvert`` (lax conversion); this module is their public face.
"""

from __future__ import annotations

from .fieldconvert import coerce_text, convert, to_dict
from .fieldspec import TYPES, FieldsIn, FieldSpec, compile_fields, describe, json_schema, normalize

__all__ = [
    "FieldSpec", "FieldsIn", "TYPES", "compile_fields", "convert", "describe", "json_schema",
    "normalize", "to_dict", "coerce_text",
]
