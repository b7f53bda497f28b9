"""Old import path of ``zagent.agentkit.fields``: it moved out of the kernel core (one release).

``from zagent.fields import ...`` keeps working; new code imports from ``zagent.agentkit.fields``.
The kernel core imports neither.
"""

from __future__ import annotations

from .agentkit.fields import FieldSpec, FieldsIn, TYPES, coerce_text, compile_fields, convert, describe, json_schema, normalize, to_dict

__all__ = ["FieldSpec", "FieldsIn", "TYPES", "coerce_text", "compile_fields", "convert", "describe", "json_schema", "normalize", "to_dict"]
