"""Child of test_memory_ownership: a checkpoint store left open, its files made immutable (``chattr +i``),
then the same file opened again in this process. Prints what the second open gave (SIGBUS kills it instead)."""

import os
import subprocess
import sys

from zagent import Kernel, ZagentError


def main(path: str) -> None:
    k = Kernel(plugins=["zagent.plugins.memory"], entry_points=False)
    first = k.memory("checkpoints", path=path)
    first.save("r1", 1, {"a": 1})
    files = [f for f in (path, path + "-wal", path + "-shm") if os.path.exists(f)]
    subprocess.run(["chattr", "+i", *files], check=True)
    try:
        try:
            second = k.memory("checkpoints", path=path)
            print("read", second.latest("r1")[1].decode())
        except ZagentError as exc:
            print("typed", type(exc).__name__)
    finally:
        subprocess.run(["chattr", "-i", *files], check=True)
    k.close()


if __name__ == "__main__":
    main(sys.argv[1])
