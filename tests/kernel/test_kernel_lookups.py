"""Look-ups by name: parsers, memory backends, embedders, agent types and the agent builder, each from its
registration hook."""

import json

import pytest

from zagent import ConfigError, Kernel


class Registrations:
    """A plugin registering one thing of every kind except tools and providers."""

    def zagent_register_parsers(self, register):
        register("upper", str.upper)

    def zagent_register_memory(self, register):
        register("dictmem", lambda **options: {"options": options})

    def zagent_register_embedders(self, register):
        register("lengths", lambda **options: (lambda texts: [[len(t)] for t in texts]))

    def zagent_register_agent_types(self, register):
        register("echo", lambda spec, kernel: ("agent", spec["name"], kernel))

    def zagent_register_agent_builders(self, register):
        from zagent.speckit.files import build_agent

        register("default", build_agent)  # what the actions plugin registers: files and trust


@pytest.fixture
def k():
    return Kernel([Registrations()], entry_points=False, strict=True)


def test_parser_by_mode(k):
    """``k.parser(mode)`` returns what ``zagent_register_parsers`` registered."""
    assert k.parser("upper")("x") == "X"


def test_unknown_parser_names_installed(k):
    """An unknown parser mode raises ``ConfigError`` listing the installed ones."""
    with pytest.raises(ConfigError, match="installed: upper"):
        k.parser("yaml")


def test_memory_factory_gets_options(k):
    """``k.memory(name, **options)`` builds a new backend from the ``zagent_register_memory`` factory."""
    assert k.memory("dictmem", path="x.db") == {"options": {"path": "x.db"}}


def test_only_embedder_is_the_default(k):
    """``k.embedder()`` with one ``zagent_register_embedders`` embedder returns it; with none, ``None``."""
    assert k.embedder()(["abc"]) == [[3]]
    assert Kernel(entry_points=False).embedder() is None


def test_agent_from_dict(k):
    """``k.agent(dict)`` builds the agent type registered by ``zagent_register_agent_types``."""
    assert k.agent({"type": "echo", "name": "bob"}) == ("agent", "bob", k)


def test_agent_without_a_builder_names_the_plugin_to_add():
    """``k.agent`` on a kernel no plugin gave an agent builder is a ``ConfigError`` naming the actions plugin."""
    with pytest.raises(ConfigError, match=r"agent builder and none is registered.*zagent\.plugins\.actions"):
        Kernel(entry_points=False).agent({"name": "x"})


def test_agent_is_what_the_registered_builder_builds():
    """``k.agent(spec, trust=, deps=)`` is ``builder(kernel, spec, trust)`` of the ``zagent_register_agent_builders``
    builder named ``"default"``, given ``deps``."""
    seen = []

    class Built:
        deps = None

    class Builder:
        def zagent_register_agent_builders(self, register):
            register("default", lambda kernel, spec, trust: seen.append((kernel, spec, trust)) or Built())

    k = Kernel([Builder()], entry_points=False, strict=True)
    agent = k.agent({"name": "x"}, trust=True, deps="db")
    assert seen == [(k, {"name": "x"}, True)] and agent.deps == "db"


def test_agent_unknown_type_names_installed(k):
    """An unknown agent type raises ``ConfigError`` listing the installed types."""
    with pytest.raises(ConfigError, match="installed agent types: echo"):
        k.agent({"type": "nope"})


def test_agent_from_json_file(k, tmp_path):
    """``k.agent(path)`` reads a JSON spec file."""
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"type": "echo", "name": "from-file"}))
    assert k.agent(path)[1] == "from-file"


def test_agent_from_yaml_file(k, tmp_path):
    """``k.agent(path)`` reads a YAML spec file."""
    pytest.importorskip("yaml")
    path = tmp_path / "a.yaml"
    path.write_text("type: echo\nname: from-yaml\n")
    assert k.agent(path)[1] == "from-yaml"


def test_bad_spec_file_says_what_is_wrong(k, tmp_path):
    """A spec file that is not JSON raises ``ConfigError`` naming the file, line and column."""
    path = tmp_path / "bad.json"
    path.write_text("{nope")
    with pytest.raises(ConfigError, match=r"bad.json:1:\d+: not valid JSON"):
        k.agent(path)


def test_registered_name_with_colon_is_refused():
    """A provider/parser name containing ':' is refused (it would break ``provider:model``)."""
    class Bad:
        def zagent_register_providers(self, register):
            register("a:b", object)
    with pytest.raises(Exception, match="invalid name 'a:b'"):
        Kernel([Bad()], entry_points=False, strict=True)
