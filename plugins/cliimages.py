"""The CLI's repeatable ``--image PATH_OR_URL`` option, for ``zagent run`` (chat agents) and ``zagent chat``.

``image_parts(values)`` sends an ``http(s)://`` or ``data:image/`` URL as is and reads a file with the inline size
bound; an unreadable file or one not PNG, JPEG, GIF or WebP is a ``ConfigError``, before any model is asked.
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence, Union

_URLS = ("https://", "http://", "data:image/")


def add_image_option(parser: argparse.ArgumentParser, help: str = "") -> None:
    parser.add_argument("--image", action="append", default=[], metavar="PATH_OR_URL",
                        help=help or "send an image with the message: a local file or an http(s):// URL "
                                     "(repeatable)")


def image_parts(values: Sequence[str]) -> list[Any]:
    """The images ``--image`` names, as parts (see the module docstring)."""
    from zagent.agentkit.media import read_part
    from zagent.errors import ConfigError
    from zagent.types import Part

    parts = []
    for value in values:
        if value.startswith(_URLS):
            parts.append(Part.image(value))
            continue
        part = read_part(value)
        if part.type != "image":
            raise ConfigError(f"--image {value}: not a PNG, JPEG, GIF or WebP image ({part.media_type}); "
                              "pass an image file or an http(s):// URL")
        parts.append(part)
    return parts


def user_message(text: str, images: Sequence[str]) -> Union[str, Any]:
    """The user's turn: ``text``, or a ``Message`` with the ``--image`` parts when there are any."""
    if not images:
        return text
    from zagent.types import Message

    return Message.user(text, image=image_parts(images))
