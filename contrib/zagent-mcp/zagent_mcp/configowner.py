"""``check_config_file``: an MCP configuration names commands zagent starts, so it is code. A file other users
could have written (it, or a folder on its way: ``zagent.speckit.trust``'s rule for modules next to a spec) is
refused before it is read."""

from __future__ import annotations

import os
import stat

from zagent import ConfigError


def check_config_file(path: str) -> None:
    """``ConfigError`` saying why ``path`` must not be read, else nothing."""
    from zagent.speckit.trust import dubious_folder

    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return  # missing: reading it reports that
    me = os.getuid() if hasattr(os, "getuid") else None
    if st.st_mode & stat.S_IWOTH:
        why = f"every user can write it (mode {stat.S_IMODE(st.st_mode):o})"
    elif me is not None and st.st_uid not in (me, 0):
        why = f"it is owned by another user (uid {st.st_uid})"
    elif dubious_folder(os.path.dirname(real)):
        why = f"other users can write or replace a folder on its way ({os.path.dirname(real)} or one above it)"
    else:
        return
    raise ConfigError(f"MCP configuration {real} names commands zagent starts, but other users could have written "
                      f"it: {why}. Make the file and its folders yours alone "
                      "(chmod go-w), or move it to a folder only you can write")
