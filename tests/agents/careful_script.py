"""A script agent written to survive exploration (tests/test_init*.py): one input on stdin or as its last
argument, one answer on stdout, the model reached through the openai SDK. A model call that fails, hangs,
or comes back cut or empty is said so in the answer: never a crash, a hang past the deadline or half a reply."""
import sys

from openai import OpenAI

SORRY = "Sorry, I could not answer that just now; please try again."


def answer(text: str) -> str:
    # a short client timeout: a hung model call must not take the gate's whole deadline
    client = OpenAI(timeout=3.0, max_retries=1)
    try:
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
    except Exception:  # any failure of the call is the user's apology, not a traceback
        return SORRY
    choice = reply.choices[0]
    # a reply cut at its length limit, or with no text, is no answer to pass on as if whole
    return choice.message.content if choice.finish_reason == "stop" and choice.message.content else SORRY


if __name__ == "__main__":
    print(answer(sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read()))
