"""A third party adds an output mode through the hook, builds it on zagent.agentkit.fields, and passes the suite."""

from zagent import ParseError
from zagent.agentkit import fields as zfields
from zagent.testing.parsers import ParserConformance


class KeyValueParser:
    """``name = value`` lines: what a small third-party mode looks like, with no zagent plugin imported."""

    name = "kv"

    def instructions(self, fields, **options):
        spec = zfields.compile_fields(fields)
        return "Reply with one line per field, `name = value`:\n" + "\n".join(f"{n} = ..." for n in spec.names)

    def parse_typed(self, text, fields, **options):
        if not isinstance(text, str):
            raise ParseError("expected text", raw=repr(text))
        values = {}
        for line in text.splitlines():
            key, sep, value = line.partition(" = ")
            if sep:
                values[key.strip()] = value.strip()
        return zfields.convert(values, fields, raw=text)

    def parse(self, text, fields, **options):
        return zfields.to_dict(self.parse_typed(text, fields, **options))

    def render(self, values, fields, **options):
        return "\n".join(f"{k} = {str(v).lower() if isinstance(v, bool) else v}"
                         for k, v in values.items() if v is not None)


class KeyValuePlugin:
    """The plugin object: one registration hook."""

    def zagent_register_parsers(self, register):
        register("kv", KeyValueParser())


class TestThirdPartyMode(ParserConformance):
    mode = "kv"
    plugins = [KeyValuePlugin()]
