"""Image parts offline and in records: the test model sees them; logs and trajectories keep placeholders only."""

from __future__ import annotations

import base64

from zagent import Kernel, Message
from zagent.plugins.react.trajectory import conversations
from zagent.plugins.runlog.scrub import scrub
from zagent.types import LLMRequest, Part

PIXELS = b"\x89PNG\r\n\x1a\nSECRET-PIXELS-0123456789"


def test_the_offline_test_model_says_it_sees_the_image():
    """test:offline answers a message with an image part mentioning the image, its type and size."""
    k = Kernel(["zagent.plugins.offline"], entry_points=False)
    text = k.llm("test:offline").complete([Message.user("what is this?", image=PIXELS)]).text
    assert text.startswith(f"I see 1 image (image/png, {len(PIXELS)} bytes).")
    k.close()


def test_the_offline_test_model_names_a_file():
    """A file part is named in the offline answer by its file name."""
    k = Kernel(["zagent.plugins.offline"], entry_points=False)
    text = k.llm("test:offline").complete([Message.user("sum up", file=Part.file(b"%PDF-1.4", name="q3.pdf"))]).text
    assert "1 file (q3.pdf)" in text
    k.close()


def test_the_run_log_scrub_keeps_a_placeholder_not_the_bytes():
    """scrub of a request with an image keeps the media type and size, and neither the bytes nor their base64."""
    request = LLMRequest(model="m", messages=[Message.user("q", image=PIXELS)])
    text = repr(scrub(request))
    assert "SECRET-PIXELS" not in text and base64.b64encode(PIXELS).decode()[:20] not in text
    assert f"{len(PIXELS)} bytes sha256:" in text


def test_the_trajectory_keeps_a_placeholder_per_part():
    """A trajectory turn with an image carries a parts placeholder beside its text, never the bytes."""
    turns = conversations([Message.user("what is this?", image=PIXELS)])
    assert turns[0]["value"] == "what is this?"
    assert turns[0]["parts"][0].startswith(f"<image/png {len(PIXELS)} bytes sha256:")
    assert "SECRET" not in repr(turns)


def test_long_conversations_encode_parts_through_the_message_cache():
    """From the cached-history length on, an image message is encoded with its parts (and text turns as before)."""
    import msgspec
    from zagent.plugins.openai.wire import encode_messages

    history = [Message.user(f"t{i}") for i in range(9)] + [Message.user("look", image=PIXELS)]
    body = msgspec.json.decode(msgspec.json.encode(encode_messages(history)))
    assert body[0] == {"role": "user", "content": "t0"}
    assert body[-1]["content"][1]["type"] == "image_url"
