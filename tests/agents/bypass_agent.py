"""An agent that sends a write around the gate's proxy (stdlib only), for tests/test_netns.py.

On POST /chat it makes one model call through the proxy (OPENAI_BASE_URL, as the gate hands it) and
then POSTs a write straight to DIRECT_URL (a service's real port; without it, to SVC_URL, the tool's
proxied URL, as a sound agent does): its answer is a JSON line of what
each achieved, e.g. {"proxy": "200", "direct": "refused: Connection refused"}.
"""

import json
import os
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from httpkit import AgentHandler, serve_agent  # noqa: E402


def post(url: str, doc: dict) -> str:
    request = urllib.request.Request(url, json.dumps(doc).encode(), {"content-type": "application/json",
                                                                     "authorization": "Bearer sk-sim"})
    try:
        with urllib.request.urlopen(request, timeout=5) as resp:
            return str(resp.status)
    except urllib.error.HTTPError as exc:
        return str(exc.code)
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"refused: {getattr(reason, 'strerror', None) or reason}"


class Handler(AgentHandler):
    def do_POST(self):
        self.json_body()
        found = {"proxy": post(os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions",
                               {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "refund 1234"}]}),
                 "direct": post((os.environ.get("DIRECT_URL") or os.environ["SVC_URL"]).rstrip("/") + "/refund",
                                {"order": "1234"})}
        print("bypass: " + json.dumps(found), flush=True)
        self.reply(200, {"reply": json.dumps(found)})


if __name__ == "__main__":
    serve_agent(Handler, "bypass agent")
