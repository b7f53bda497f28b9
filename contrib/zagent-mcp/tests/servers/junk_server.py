"""Not an MCP server: prints a greeting on stdout, then waits (for the 'not an MCP server' test)."""

import sys
import time

print("Hello! This is a plain program, not an MCP server.", flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 60)
