"""zagent.providerkit.encodeonce.encoded_once: a spec's wire form is built once per spec object, in a bounded cache."""

import json

from zagent.providerkit import encoded_once
from zagent.types import ToolSpec


def test_one_build_per_spec_object_and_equal_specs_are_distinct():
    """The same spec object is built once; another object (even an equal one) gets its own build."""
    built = []

    def build(spec):
        built.append(spec.name)
        return {"name": spec.name}

    encode = encoded_once(build)
    a, b = ToolSpec(name="a", description="", parameters={}), ToolSpec(name="a", description="", parameters={})
    assert encode(a) is encode(a)
    assert json.loads(bytes(encode(b))) == {"name": "a"}
    assert built == ["a", "a"]


def test_the_cache_is_bounded():
    """Past ``limit`` entries the cache starts over, so specs made per request cannot grow it forever."""
    built = []
    encode = encoded_once(lambda s: built.append(s) or {}, limit=2)
    specs = [ToolSpec(name=f"t{i}", description="", parameters={}) for i in range(3)]
    for s in specs:
        encode(s)
    encode(specs[0])  # evicted when the third spec arrived
    assert len(built) == 4


def test_messages_once_encodes_each_message_once_and_again_when_a_field_is_replaced():
    """A message resent on every step is built once; giving it new content or tool calls builds it again."""
    from zagent import Message, ToolCall
    from zagent.providerkit import messages_once

    built = []

    def build(m):
        built.append(m)
        return {"role": m.role, "content": m.content, "calls": [c.name for c in m.tool_calls]}

    encode = messages_once(build)
    m = Message(role="user", content="hi")
    assert bytes(encode(m)) == b'{"role":"user","content":"hi","calls":[]}'
    assert bytes(encode(m)) == b'{"role":"user","content":"hi","calls":[]}'
    assert len(built) == 1
    m.content = "changed"
    assert bytes(encode(m)) == b'{"role":"user","content":"changed","calls":[]}'
    m.tool_calls = [ToolCall(id="c", name="add", arguments={})]
    assert bytes(encode(m)) == b'{"role":"user","content":"changed","calls":["add"]}'
    assert len(built) == 3


def test_messages_once_encodes_again_when_any_other_field_is_replaced():
    """A message given a new name, tool_call_id or role is built again, not sent with its old bytes."""
    from zagent import Message
    from zagent.providerkit import messages_once

    encode = messages_once(lambda m: {"role": m.role, "name": m.name, "id": m.tool_call_id})
    m = Message(role="tool", content="5", tool_call_id="a", name="add")
    assert bytes(encode(m)) == b'{"role":"tool","name":"add","id":"a"}'
    m.tool_call_id = "b"
    assert bytes(encode(m)) == b'{"role":"tool","name":"add","id":"b"}'
    m.name = "plus"
    assert bytes(encode(m)) == b'{"role":"tool","name":"plus","id":"b"}'
    m.role = "user"
    assert bytes(encode(m)) == b'{"role":"user","name":"plus","id":"b"}'


def test_messages_once_cache_is_bounded():
    """Past ``limit`` messages the cache starts over, so it keeps at most that many alive."""
    from zagent import Message
    from zagent.providerkit import messages_once

    encode = messages_once(lambda m: {"content": m.content}, limit=3)
    kept = [Message(role="user", content=str(i)) for i in range(10)]
    for m in kept:
        encode(m)
    cache = next(c.cell_contents for c in encode.__closure__ if isinstance(c.cell_contents, dict))
    assert len(cache) <= 3


def test_history_encoder_builds_a_short_conversation_whole_and_caches_nothing():
    """Below ``cache_from`` messages every request builds each message again, and none is cached: the
    same messages in a later, long conversation are built once more."""
    from zagent import Message
    from zagent.providerkit import history_encoder

    built = []
    encode = history_encoder(lambda m: built.append(m) or {"content": m.content}, cache_from=4)
    history = [Message(role="user", content=str(i)) for i in range(3)]
    assert encode(history) == [{"content": "0"}, {"content": "1"}, {"content": "2"}]
    encode(history)
    assert len(built) == 6
    encode([*history, Message(role="user", content="3")])
    assert len(built) == 10


def test_history_encoder_encodes_a_long_conversation_once_per_message():
    """From ``cache_from`` messages on, a message resent on the next request is not built again."""
    from zagent import Message
    from zagent.providerkit import history_encoder

    built = []
    encode = history_encoder(lambda m: built.append(m) or {"content": m.content}, cache_from=4)
    history = [Message(role="user", content=str(i)) for i in range(4)]
    first = [bytes(raw) for raw in encode(history)]
    history.append(Message(role="assistant", content="4"))
    second = [bytes(raw) for raw in encode(history)]
    assert first == [b'{"content":"%d"}' % i for i in range(4)]
    assert second == first + [b'{"content":"4"}']
    assert len(built) == 5


def test_openai_body_is_the_same_json_below_and_above_the_cache_threshold():
    """A short and a long conversation give the body JSON that encoding each message directly gives."""
    import msgspec

    from zagent import Kernel, Message, ToolCall
    from zagent.plugins.openai import wire
    from zagent.providerkit.encodeonce import CACHE_FROM

    k = Kernel(["zagent.plugins.openai"], entry_points=False)
    llm = k.llm("openai:gpt-4o-mini", api_key="x", base_url="http://127.0.0.1:9/v1")
    for n in (1, CACHE_FROM - 1, CACHE_FROM, CACHE_FROM + 5):
        messages = [Message(role="assistant", content=None, tool_calls=[ToolCall(id=f"c{i}", name="add",
                                                                                  arguments={"a": i})])
                    if i % 2 else Message(role="user", content=f"q{i}") for i in range(n)]
        body = msgspec.json.decode(llm.body(llm.request(messages)))
        assert body["messages"] == [msgspec.json.decode(msgspec.json.encode(wire.encode_message(m)))
                                    for m in messages]
    k.close()
