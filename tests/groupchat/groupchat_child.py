"""Child process for the group chat kill test (run with python, not collected by pytest).

    python groupchat_child.py DB LOG ROUNDS HANG   -> run "killed-chat" (speakers A and B take turns),
                                                     checkpointed to DB; round HANG hangs until SIGKILL
Every turn appends its round to LOG when it starts, so the parent can count turns.
"""

import sys
import threading

from zagent import Kernel
from zagent.plugins.groupchat import GroupChat

PLUGINS = ["zagent.plugins.memory", "zagent.plugins.manager", "zagent.plugins.groupchat"]


class Speaker:
    def __init__(self, name, log, hang):
        self.name, self.description, self.log, self.hang = name, f"the {name}", log, hang

    def speak(self, turn):
        with open(self.log, "a") as f:
            f.write(f"{turn.round}\n")
        if turn.round == self.hang:
            threading.Event().wait()  # until the parent kills this process
        return f"{self.name} in round {turn.round}"


def main(db, log, rounds, hang):
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    store = k.memory("checkpoints", path=db, keep_last=None)
    chat = GroupChat(kernel=k, agents=[Speaker("A", log, hang), Speaker("B", log, hang)],
                     termination={"max_rounds": rounds}, checkpoints=store)
    chat.run("count the rounds", run_id="killed-chat")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
