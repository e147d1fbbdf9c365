"""A command agent with a start-up mistake: it imports a module that is not installed.

With ASK_FIRST set it first asks the LLM at $OPENAI_BASE_URL, then dies the same way:
an agent that did something before failing, which is a failure, not a start-up error.
"""

import os
import sys
import urllib.request

sys.stdin.read()
if os.environ.get("ASK_FIRST"):
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", method="POST",
                                 data=b'{"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]}',
                                 headers={"content-type": "application/json", "authorization": "Bearer sk-test"})
    urllib.request.urlopen(req, timeout=5).read()
import chaos_gate_no_such_module  # noqa: E402,F401  (the planted start-up mistake)
