"""max_message_bytes: a server sending a message over it is cut off while it is read (attack tests, real servers)."""

import os
import sys

from mcp_helpers import demo_stdio
from zagent_mcp.plugin import runtime_of

BIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "servers", "big_server.py")


def big(*args, **extra):
    return {"command": sys.executable, "args": [BIG, *args], **extra}


def test_a_64_mib_line_without_newline_fails_the_connection_and_not_its_neighbour(make_kernel):
    """A server writing 64 MiB without a newline fails with the reason; a normal server beside it keeps working."""
    k = make_kernel({"big": big("flood", connect_timeout=60), "demo": demo_stdio(tools=["echo"])})
    status = {s["name"]: s for s in runtime_of(k).status()}
    assert status["big"]["state"] == "failed"
    assert "sent a message over 16 MiB; raise max_message_bytes" in status["big"]["error"]
    assert k.run_tool({"name": "demo.echo", "arguments": {"text": "ok"}}).value == {"result": "ok"}


def test_a_message_exactly_at_the_bound_works_and_one_byte_over_fails(make_kernel):
    """With max_message_bytes 100000, a 100000-byte result arrives; a 100001-byte one fails with the reason."""
    k = make_kernel({"big": big(max_message_bytes=100_000)})
    ok = k.run_tool({"name": "big.blob", "arguments": {"size": 100_000}})
    assert ok.state == "success"
    over = k.run_tool({"name": "big.blob", "arguments": {"size": 100_001}})
    assert over.state == "error" and "sent a message over 100000 bytes" in over.content
    conn = runtime_of(k).connections["big"]
    assert conn.state == "failed" and "max_message_bytes" in conn.error
