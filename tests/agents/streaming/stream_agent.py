"""A test agent that answers /chat with a recorded stream of one real shape (SHAPE) and outcome (MODE).

Each stream is the shape its framework serves (tests/test_invoke_streams.py names the source), sent
chunk by chunk (chunked transfer encoding) as a real streaming endpoint does. Every event carries the
metadata a real stream carries: ISO timestamps and ids, one of which is a Luhn-valid 16-digit number,
so an output invariant that saw the metadata would report a card number. MODE=error puts the
framework's own error event inside the 200; MODE=cut closes the connection after two events, before
the stream's last chunk, as an agent that dies mid-answer does.
"""

import json
import os
import sys

sys.path.insert(0, os.environ["HTTPKIT"])
from httpkit import AgentHandler, serve_agent  # noqa: E402

STAMP, ID = "2026-01-02T03:04:05.123Z", 4111111111111111
ERROR = "upstream model failed: malformed completion"


def sse(*docs, named=()):
    names = list(named) or [""] * len(docs)
    out = []
    for name, doc in zip(names, docs, strict=True):
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}id: {ID}\ndata: {doc if isinstance(doc, str) else json.dumps(doc)}\n\n")
    return out


def chatkit(error):
    msg = {"type": "assistant_message", "id": f"msg_{ID}", "thread_id": "thr_1", "created_at": STAMP}
    delta = lambda text: {"type": "thread.item.updated", "item_id": msg["id"],  # noqa: E731
                          "update": {"type": "assistant_message.content_part.text_delta", "content_index": 0,
                                     "delta": text}}
    events = [{"type": "thread.created", "thread": {"id": "thr_1", "created_at": STAMP, "status": {"type": "active"}}},
              {"type": "thread.item.added", "item": {**msg, "content": []}}, delta("Your flight is "), delta("on time.")]
    if error:
        return sse(*events, {"type": "error", "code": "stream.error", "message": ERROR, "allow_retry": False})
    done = {"type": "thread.item.done", "item": {**msg, "content": [
        {"type": "output_text", "text": "Your flight is on time.", "annotations": []}]}}
    return sse(*events, done)


def ui_message(error):
    events = [{"type": "start", "messageId": f"msg-{ID}"}, {"type": "start-step"}, {"type": "text-start", "id": STAMP},
              {"type": "text-delta", "id": STAMP, "delta": "Your flight "},
              {"type": "text-delta", "id": STAMP, "delta": "is on time."}]
    tail = [{"type": "error", "errorText": ERROR}] if error else [{"type": "text-end", "id": STAMP}, {"type": "finish"}]
    return sse(*events, *tail, "[DONE]")


def data_stream(error):
    lines = [f'f:{{"messageId":"msg-{ID}"}}', '0:"Your flight "', '0:"is on time."']
    lines += [f"3:{json.dumps(ERROR)}"] if error else \
        [f'e:{{"finishReason":"stop","usage":{{"promptTokens":{ID},"completionTokens":7}},"isContinued":false}}',
         f'd:{{"finishReason":"stop","usage":{{"promptTokens":{ID},"completionTokens":7}}}}']
    return [line + "\n" for line in lines]


def langserve(error):
    chunk = lambda text: {"content": text, "type": "AIMessageChunk", "id": f"run-{ID}",  # noqa: E731
                          "response_metadata": {"created": STAMP}}
    events = [{"run_id": f"{ID}"}, chunk("Your flight "), chunk("is on time.")]
    names = ["metadata", "data", "data"]
    if error:
        return sse(*events, {"status_code": 500, "message": ERROR}, named=[*names, "error"])
    return sse(*events, "", named=[*names, "end"])


def ndjson(error):
    events = [{"type": "run.started", "run_id": ID, "at": STAMP}, {"delta": "Your flight ", "at": STAMP},
              {"delta": "is on time.", "at": STAMP, "seq": ID}]
    events += [{"error": {"message": ERROR, "at": STAMP}}] if error else [{"type": "run.finished", "at": STAMP}]
    return [json.dumps(e) + "\n" for e in events]


SHAPES = {"chatkit": (chatkit, "text/event-stream", {}), "ui_message": (ui_message, "text/event-stream",
                                                                         {"x-vercel-ai-ui-message-stream": "v1"}),
          "data_stream": (data_stream, "text/plain; charset=utf-8", {"x-vercel-ai-data-stream": "v1"}),
          "langserve": (langserve, "text/event-stream; charset=utf-8", {}),
          "ndjson": (ndjson, "application/x-ndjson", {})}


class Handler(AgentHandler):
    def do_POST(self):
        self.json_body()
        make, content_type, headers = SHAPES[os.environ["SHAPE"]]
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("transfer-encoding", "chunked")
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        mode = os.environ.get("MODE")
        for n, part in enumerate(make(mode == "error")):
            if mode == "cut" and n == 2:
                self.close_connection = True
                return
            data = part.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


serve_agent(Handler)
