"""A command agent on the real `openai` SDK that answers repeats from a disk cache, as DSPy's
default cache does: its first cell calls the model, every later cell with an input it has seen
makes no call at all. MODE=fixed never calls anything (it ignores the base URL the gate sets);
MODE=counter keeps a count across cells in a state file and puts it in its answer (state kept
between cells, no reset).
"""

import json
import os
import sys
from pathlib import Path

text = sys.stdin.read().strip()
mode = os.environ.get("MODE", "cache")
state = Path(os.environ["STATE"])
if mode == "fixed":
    print("Your refund has been issued.")
    sys.exit(0)
if mode == "counter":
    count = int(state.read_text()) + 1 if state.exists() else 1
    state.write_text(str(count))
cache = json.loads(state.read_text()) if mode == "cache" and state.exists() else {}
if text in cache:
    print(cache[text])
    sys.exit(0)
from openai import OpenAI  # noqa: E402  (only a miss pays the import)

reply = OpenAI().chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
answer = reply.choices[0].message.content or ""
if mode == "counter":
    answer = f"{answer} (request {count})"
else:
    cache[text] = answer
    state.write_text(json.dumps(cache))
print(answer)
