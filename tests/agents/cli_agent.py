"""A command-mode agent: reads the input from stdin (or argv[1]) and prints its answer.

Input containing EXIT7 exits 7; HANG sleeps forever; otherwise it echoes upper-cased.
"""

import sys
import time

text = sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read()
if "HANG" in text:
    time.sleep(3600)
if "EXIT7" in text:
    print("bad input", file=sys.stderr)
    sys.exit(7)
print(text.upper())
