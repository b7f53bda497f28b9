"""``--image`` on the CLI against a loopback OpenAI-compatible server: the wire payload carries the image part
(``zagent run`` of a chat agent, ``zagent chat``), and a model that takes no images is refused before any request."""

from __future__ import annotations

import base64
import json

import pytest

from .conftest import bodies

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24


@pytest.fixture
def files(tmp_path):
    """A react agent file without tools and a small PNG beside it."""
    (tmp_path / "eyes.json").write_text(json.dumps({"type": "react", "name": "eyes"}))
    (tmp_path / "shot.png").write_bytes(PNG)
    return tmp_path


def _image_urls(body):
    return [p["image_url"]["url"] for m in body["messages"] if isinstance(m.get("content"), list)
            for p in m["content"] if p.get("type") == "image_url"]


def test_zagent_run_sends_a_local_image_as_a_data_url(server, zagent, files):
    """`zagent run AGENT --input task=... --image shot.png`: the request has an image_url part with the bytes."""
    code, out, err = zagent("run", str(files / "eyes.json"), "--input", "task=what is this?",
                            "--image", str(files / "shot.png"))
    assert code == 0, err
    [body] = bodies(server)
    assert _image_urls(body) == ["data:image/png;base64," + base64.b64encode(PNG).decode()]
    assert out.strip() == f"echo: what is this? image [image/png {len(PNG)} bytes]"


def test_zagent_run_sends_an_image_url_and_several_images(server, zagent, files):
    """A URL goes by URL; --image repeats, in order."""
    code, _out, err = zagent("run", str(files / "eyes.json"), "--input", "task=compare",
                             "--image", "https://example.com/a.png", "--image", str(files / "shot.png"))
    assert code == 0, err
    urls = _image_urls(bodies(server)[0])
    assert urls[0] == "https://example.com/a.png" and urls[1].startswith("data:image/png;base64,")


def test_a_text_only_model_is_refused_before_any_request(server, zagent, files):
    """With --profile input_media=[] the image is a clear error and the server receives nothing."""
    code, _out, err = zagent("run", str(files / "eyes.json"), "--input", "task=look", "--image",
                             str(files / "shot.png"), "--profile", "input_media=[]")
    assert code != 0 and "cannot take image parts" in err
    assert bodies(server) == []


def test_a_file_that_is_not_an_image_is_refused_before_any_request(server, zagent, files):
    """--image naming a text file (or a missing one) is an error naming it; no request is made."""
    (files / "notes.txt").write_text("not an image")
    code, _out, err = zagent("run", str(files / "eyes.json"), "--input", "task=look", "--image",
                             str(files / "notes.txt"))
    assert code != 0 and "notes.txt: not a PNG, JPEG, GIF or WebP image" in err
    code, _out, err = zagent("run", str(files / "eyes.json"), "--input", "task=look", "--image",
                             str(files / "missing.png"))
    assert code != 0 and "cannot read" in err and "missing.png" in err
    assert bodies(server) == []


def test_image_on_a_declared_agent_is_a_usage_error(server, zagent, files):
    """A declared agent takes text inputs only: --image says so instead of dropping the image."""
    from .conftest import EXAMPLES

    code, _out, err = zagent("run", str(EXAMPLES / "qa_agent.json"), "--input", "question=q", "--image",
                             str(files / "shot.png"))
    assert code != 0 and "--image is for chat agents" in err
    assert bodies(server) == []


def test_zagent_chat_sends_the_image_with_the_first_message(server, zagent, files, monkeypatch):
    """`zagent chat --image`: the first turn's request carries it, the second turn's history still does."""
    import io

    from tests.servers.openai_server import stream_reply

    server.then(stream_reply("a cat"), stream_reply("still a cat"))  # the chat streams its replies
    monkeypatch.setattr("sys.stdin", io.StringIO("what is this?\nand now?\n"))
    code, out, err = zagent("chat", str(files / "eyes.json"), "--image", str(files / "shot.png"))
    assert code == 0, err
    first, second = bodies(server)
    assert len(_image_urls(first)) == 1 and len(_image_urls(second)) == 1
    assert second["messages"][-1] == {"role": "user", "content": "and now?"}
    assert "eyes> a cat" in out and "eyes> still a cat" in out
