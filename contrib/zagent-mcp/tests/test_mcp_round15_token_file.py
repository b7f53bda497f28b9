"""Round fifteen: ``zagent mcp serve --token-file`` read a bearer-token file of mode 0644, so every local user (and
the file's group) could read the token and call the served tools on the port. Now, on POSIX, a token file its group
or other users can read or write is refused before it is read, with its path, its mode and the fix
(``chmod 600 PATH``), as ssh refuses a private key others can read.
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("zagent_mcp")

from zagent import ConfigError  # noqa: E402
from zagent_mcp.serveauth import token_from  # noqa: E402

TOKEN = "r15-secret-bearer-token-0123456789abcdef"
posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")


@posix_only
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602, 0o660])
def test_a_token_file_others_can_read_or_write_is_refused(tmp_path, mode):
    """Attack (got through, round fifteen): the token file is left at the umask's 0644 (or shared with a group),
    so another local user reads the token and calls the served tools. Defence: a ConfigError naming the path, the
    mode and ``chmod 600 PATH``; the token is neither used nor shown."""
    path = tmp_path / "token.txt"
    path.write_text(TOKEN + "\n")
    path.chmod(mode)
    with pytest.raises(ConfigError) as caught:
        token_from(str(path))
    message = str(caught.value)
    assert str(path) in message and f"mode {mode:04o}" in message.replace("mode is", "mode")
    assert f"chmod 600 {path}" in message
    assert TOKEN not in message


@posix_only
@pytest.mark.parametrize("mode", [0o600, 0o400, 0o700])
def test_a_token_file_only_its_owner_can_read_is_taken(tmp_path, mode):
    """The defence refuses only shared files: a token file readable by its owner alone (600, 400, even 700) is
    read as before."""
    path = tmp_path / "token.txt"
    path.write_text(TOKEN + "\n")
    path.chmod(mode)
    assert token_from(str(path)) == TOKEN


@posix_only
def test_a_private_token_file_behind_a_symlink_is_judged_by_the_file_itself(tmp_path):
    """Attack: the token file is 0644 but named through a symlink (whose own mode is 777). Defence: the mode of
    the file opened is what counts, so it is refused; made 600, it is read through the link."""
    target = tmp_path / "real-token"
    target.write_text(TOKEN + "\n")
    target.chmod(0o644)
    link = tmp_path / "token-link"
    link.symlink_to(target)
    with pytest.raises(ConfigError, match="mode is 0644"):
        token_from(str(link))
    target.chmod(0o600)
    assert token_from(str(link)) == TOKEN
