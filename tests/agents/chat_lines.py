"""A conversational command agent (`conversation: lines`): ONE process reads the turns from stdin, a line
each, and writes one answer line per turn; its memory of the conversation is its own.

"My name is X" is remembered and answered "Nice to meet you, X."; "What is my name?" is answered from
that memory. With $OPENAI_BASE_URL set, every line is answered by the model instead, sent the
whole conversation so far (the sim's `turn:` and `after:` rules see its user turns and earlier answers).
Each line read is appended to $RECORD as a JSON line with the process id (one process per conversation).
CRASH exits 2 with a reason on stderr, before answering; `SLOW n` sleeps n seconds first.
"""

import json
import os
import re
import sys
import time
import urllib.request

NAME = re.compile(r"my name is (\w+)", re.I)


def ask_model(messages: list) -> str:
    body = {"model": "gpt-test", "messages": messages}
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", method="POST",
                                 data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json", "authorization": "Bearer sk-test"})
    with urllib.request.urlopen(req, timeout=5) as resp:
        return json.loads(resp.read())["choices"][0]["message"]["content"]


def answer(text: str, name: str | None) -> str:
    told = NAME.search(text)
    if told:
        return f"Nice to meet you, {told.group(1)}."
    if "name" in text.lower():
        return f"Your name is {name}." if name else "I do not know your name."
    return f"You said: {text}"


def main() -> None:
    name, messages = None, []
    for line in sys.stdin:
        text = line.rstrip("\n")
        with open(os.environ["RECORD"], "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"pid": os.getpid(), "text": text}) + "\n")
        if slow := re.search(r"SLOW ([\d.]+)", text):
            time.sleep(float(slow.group(1)))
        if "CRASH" in text:
            print("the agent fell over", file=sys.stderr)
            sys.exit(2)
        if told := NAME.search(text):
            name = told.group(1)
        messages.append({"role": "user", "content": text})
        said = ask_model(messages) if os.environ.get("OPENAI_BASE_URL") else answer(text, name)
        messages.append({"role": "assistant", "content": said})
        print(said.replace("\n", " "), flush=True)


if __name__ == "__main__":
    main()
