"""A command agent run once per conversation turn (tests/test_conversation_commands.py): it keeps nothing.

The turn's text arrives on stdin; the conversation so far, with `history: messages`, in
$CHAOS_GATE_HISTORY (OpenAI-style messages JSON). "My name is X" is answered "Nice to meet you, X.";
"What is my name?" from the history alone, so a gate that drops the history gets "I do not know your
name.". Each run appends what it was given ($TURN, $SESSION from the config's env templates, the
history) to $RECORD as a JSON line. A text with FAIL exits 3 with a reason on stderr; `SLOW n` sleeps
n seconds first.
"""

import json
import os
import re
import sys
import time

NAME = re.compile(r"my name is (\w+)", re.I)

text = sys.stdin.read()
raw = os.environ.get("CHAOS_GATE_HISTORY")
history = json.loads(raw) if raw is not None else None
with open(os.environ["RECORD"], "a", encoding="utf-8") as fh:
    fh.write(json.dumps({"pid": os.getpid(), "text": text, "turn": os.environ.get("TURN"),
                         "session": os.environ.get("SESSION"), "history": history}) + "\n")
if slow := re.search(r"SLOW ([\d.]+)", text):
    time.sleep(float(slow.group(1)))
if "FAIL" in text:
    print("this turn broke", file=sys.stderr)
    sys.exit(3)
told = NAME.search(text)
names = [m.group(1) for msg in history or [] if msg["role"] == "user" and (m := NAME.search(msg["content"]))]
if told:
    print(f"Nice to meet you, {told.group(1)}.")
elif "name" in text.lower():
    print(f"Your name is {names[-1]}." if names else "I do not know your name.")
else:
    print(f"You said: {text}")
