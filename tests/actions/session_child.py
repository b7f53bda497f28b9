"""Child process for the session tests (run with python, not collected by pytest).

    python session_child.py BASE_URL DB SESSION_ID TEXT  -> one chat turn of a fresh agent in the session
Prints the reply. The model is the OpenAI-compatible loopback server the parent runs.
"""

import sys

from zagent import Kernel
from zagent.plugins.memory import SQLiteSession

url, db, session_id, text = sys.argv[1:5]
k = Kernel(plugins=["zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.openai"],
           entry_points=False, strict=True)
agent = k.agent({"name": "Pal", "prompt": "Chat: {text}", "inputs": [{"name": "text", "type": "string"}],
                 "outputs": [{"name": "answer", "type": "string"}], "parse_mode": "str",
                 "llm": "openai:gpt-test", "llm_config": {"base_url": url, "api_key": "sk-test"}})
print(agent.chat(text, session=SQLiteSession(session_id, db)).content)
k.close()
