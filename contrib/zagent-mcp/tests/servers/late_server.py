"""The demo server, started only after a delay (argv[1] seconds): a slow MCP server for start-up tests."""

import os
import runpy
import sys
import time

time.sleep(float(sys.argv[1]))
sys.argv = [sys.argv[0]]
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo_server.py"), run_name="__main__")
