"""A loopback stand-in of the LangSmith API, enough for the real `langsmith` SDK to trace to it
and export from it: run ingestion (`POST /runs`, `PATCH /runs/{id}`, `/runs/batch`,
`/runs/multipart`), `GET /info`, projects (`/sessions`), `GET /runs/{id}` and
`POST /runs/query` (filters: trace, id, is_root, run_type, parent_run; newest first, as
the service lists them). Tests use it to produce real export files without the network.
"""

from __future__ import annotations

import json
import threading
import uuid
from email.parser import BytesParser
from email.policy import HTTP

from httpkit import JsonHandler, serve

PROJECT_ID = str(uuid.UUID(int=7))


class LangSmithStandIn:
    def __init__(self):
        self.runs: dict[str, dict] = {}
        self.lock = threading.Lock()
        outer = self

        class Handler(JsonHandler):
            def do_GET(self):
                outer.get(self)

            def do_POST(self):
                outer.post(self)

            def do_PATCH(self):
                run_id = self.path.rstrip("/").rsplit("/", 1)[-1]
                outer.merge({**self.json_body(), "id": run_id})
                self.reply(200, {})

        self.server, self.url = serve(Handler)

    # -- ingestion ---------------------------------------------------------------------
    def merge(self, fields: dict) -> None:
        with self.lock:
            run = self.runs.setdefault(str(fields["id"]), {"id": str(fields["id"])})
            run.update({k: v for k, v in fields.items() if v is not None or k not in run})

    def multipart(self, handler) -> None:
        body = handler.rfile.read(int(handler.headers["content-length"]))
        head = f"content-type: {handler.headers['content-type']}\r\n\r\n".encode()
        message = BytesParser(policy=HTTP).parsebytes(head + body)
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition") or ""
            op, _, rest = name.partition(".")
            run_id, _, field = rest.partition(".")
            if op not in ("post", "patch"):
                continue  # attachments and feedback are not runs
            doc = json.loads(part.get_payload(decode=True) or b"null")
            self.merge({"id": run_id, field: doc} if field else {**doc, "id": run_id})

    def post(self, handler) -> None:
        path = handler.path.split("?")[0]
        if path == "/runs/multipart":
            self.multipart(handler)
            return handler.reply(202, {})
        doc = handler.json_body()
        if path == "/runs/batch":
            for op in ("post", "patch"):
                for run in doc.get(op) or []:
                    self.merge(run)
            return handler.reply(202, {})
        if path == "/runs":
            self.merge(doc)
            return handler.reply(202, {})
        if path == "/runs/query":
            return handler.reply(200, {"runs": self.query(doc), "cursors": {"next": None}})
        if path == "/sessions":
            return handler.reply(200, self.project(doc.get("name", "default")))
        handler.reply(404, {"detail": f"stand-in: no {path}"})

    # -- reading back ------------------------------------------------------------------
    def get(self, handler) -> None:
        path = handler.path.split("?")[0]
        if path == "/info":
            return handler.reply(200, {"version": "0.0.0-standin", "batch_ingest_config": {}})
        if path.startswith("/sessions"):
            return handler.reply(200, [self.project("incidents")])
        if path.startswith("/runs/"):
            run = self.runs.get(path.rsplit("/", 1)[-1])
            return handler.reply(200, self.view(run)) if run else handler.reply(404, {"detail": "run not found"})
        handler.reply(404, {"detail": f"stand-in: no {path}"})

    def project(self, name: str) -> dict:
        return {"id": PROJECT_ID, "name": name, "tenant_id": str(uuid.UUID(int=1)),
                "start_time": "2026-01-01T00:00:00Z", "reference_dataset_id": None}

    def view(self, run: dict) -> dict:
        out = dict(run, session_id=PROJECT_ID, status="error" if run.get("error") else "success")
        out.setdefault("trace_id", run["id"])
        out.setdefault("dotted_order", "")
        out.setdefault("child_run_ids", None)
        return out

    def query(self, q: dict) -> list[dict]:
        def keep(run: dict) -> bool:
            return ((q.get("trace") is None or str(run.get("trace_id")) == str(q["trace"]))
                    and (not q.get("id") or str(run["id"]) in {str(i) for i in q["id"]})
                    and (q.get("is_root") is None or (run.get("parent_run_id") is None) == q["is_root"])
                    and (q.get("run_type") is None or run.get("run_type") == q["run_type"])
                    and (q.get("parent_run") is None or str(run.get("parent_run_id")) == str(q["parent_run"])))
        with self.lock:
            found = [self.view(r) for r in self.runs.values() if keep(r)]
        return sorted(found, key=lambda r: str(r.get("start_time") or ""), reverse=True)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
