"""``zagent.providerkit.split_data_url``: a ``data:`` URL's media type and base64 payload, for every provider
that sends a data-URL part as bytes (anthropic, ollama) and for the OTel content capture."""

import base64
import urllib.parse

from hypothesis import given, strategies as st

from zagent.providerkit import split_data_url


def test_a_base64_data_url_gives_its_media_type_and_payload_unchanged():
    """``data:image/png;base64,AAAA`` -> ``("image/png", "AAAA")``."""
    assert split_data_url("data:image/png;base64,iVBORw0K") == ("image/png", "iVBORw0K")


def test_a_percent_encoded_data_url_is_turned_into_base64():
    """A data URL without ``;base64`` holds percent-encoded bytes: the payload comes back as their base64."""
    assert split_data_url("data:text/plain,hi%20there") == ("text/plain", base64.b64encode(b"hi there").decode())


def test_a_data_url_naming_no_media_type_gives_an_empty_one():
    """``data:;base64,...`` and ``data:,...`` name no media type: ``""`` (the caller falls back to the part's)."""
    assert split_data_url("data:;base64,QUJD")[0] == "" and split_data_url("data:,abc")[0] == ""


@given(st.binary(max_size=200), st.sampled_from(["image/png", "application/pdf", ""]))
def test_both_encodings_of_the_same_bytes_give_the_same_payload(data, media):
    """Base64 and percent-encoded data URLs of the same bytes split to the same media type and payload."""
    as_b64 = f"data:{media};base64,{base64.b64encode(data).decode()}"
    as_pct = f"data:{media},{urllib.parse.quote_from_bytes(data)}"
    assert split_data_url(as_b64) == split_data_url(as_pct) == (media, base64.b64encode(data).decode())


def test_anthropic_and_ollama_send_a_percent_encoded_image_url_as_its_bytes_base64():
    """A percent-encoded ``data:image/...`` part reaches Anthropic's base64 source and Ollama's ``images`` as the
    image's bytes in base64, never as the percent-encoded text (which the servers would decode to garbage)."""
    from zagent import Message, Part
    from zagent.plugins.anthropic.wire import part_blocks
    from zagent.plugins.ollama.provider import _images

    raw = b"\x89PNG\r\n\x1a\n\x00\x01"
    url = "data:image/png," + urllib.parse.quote_from_bytes(raw)
    message = Message(role="user", content="what is it?", parts=[Part(type="image", url=url)])
    expected = base64.b64encode(raw).decode()
    (block,) = [b for b in part_blocks(message) if b["type"] == "image"]
    assert block["source"] == {"type": "base64", "media_type": "image/png", "data": expected}
    assert _images(message) == [expected]
