"""A loopback OpenAI-compatible server for long tool loops (``bench/scale.py``), stdlib only.

``POST /steps/<N>/v1/chat/completions`` replies with one ``add`` tool call while
the request holds fewer than ``N`` tool results (counted as ``"role":"tool"``
in the body, so the reply costs the server one byte scan), then with the text
``"done"``. Any other path prefix (``/v1/...``) uses ``N = 1``. Keep-alive,
``Content-Length`` bodies only. Binds 127.0.0.1; prints ``LISTENING <port>``.

    python bench/stepserver.py [--port 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json

TOOL_MARK = b'"role":"tool"'


def reply(path: bytes, body: bytes) -> bytes:
    target = 1
    if path.startswith(b"/steps/"):
        target = int(path.split(b"/")[2])
    done = body.count(TOOL_MARK) + body.count(b'"role": "tool"')
    if done < target:
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{done}", "type": "function",
            "function": {"name": "add", "arguments": json.dumps({"a": done, "b": 1})}}]}
        finish = "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": "done"}, "stop"
    return json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "mock",
                       "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}).encode()


class Handler(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buffer[:head_end]
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(self.buffer) < head_end + 4 + length:
                return
            body = self.buffer[head_end + 4:head_end + 4 + length]
            self.buffer = self.buffer[head_end + 4 + length:]
            path = head.split(b" ", 2)[1]
            out = reply(path, body) if b"chat/completions" in path else b'{"data": []}'
            self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                                 + str(len(out)).encode() + b"\r\n\r\n" + out)


async def serve(port: int) -> None:
    server = await asyncio.get_running_loop().create_server(Handler, "127.0.0.1", port)
    print("LISTENING", server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    asyncio.run(serve(ap.parse_args().port))
