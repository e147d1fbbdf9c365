"""A local stand-in for the GitHub REST API endpoints the Action uses (it cannot be
reached from here): issue comments list/create/update, GET /user, with pagination,
token checks, unknown repositories (404) and the 65,536-character body limit."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

from httpkit import JsonHandler, serve

TOKENS = {
    "ghs_app_token": {"login": "github-actions[bot]", "type": "Bot", "write": True, "user_endpoint": False},
    "ghs_read_only": {"login": "github-actions[bot]", "type": "Bot", "write": False, "user_endpoint": False},
    "ghp_personal": {"login": "alice", "type": "User", "write": True, "user_endpoint": True},
}


class FakeGitHub:
    def __init__(self):
        self.comments: dict[int, dict] = {}
        self.next_id = 1000
        self.requests: list[tuple[str, str]] = []
        self.repos: set[str] | None = None  # when set, any other repository answers 404
        outer = self

        class Handler(JsonHandler):
            # HTTP/1.0: some refusals answer before reading the body, which keep-alive would desync
            protocol_version = "HTTP/1.0"

            def _who(self):
                auth = self.headers.get("authorization", "")
                return TOKENS.get(auth.removeprefix("Bearer ").removeprefix("token "))

            def do_GET(self):
                outer.requests.append(("GET", self.path))
                who = self._who()
                if who is None:
                    return self.reply(401, {"message": "Bad credentials"})
                url = urlparse(self.path)
                if url.path == "/user":
                    if not who["user_endpoint"]:
                        return self.reply(403, {"message": "Resource not accessible by integration"})
                    return self.reply(200, {"login": who["login"], "type": who["type"]})
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments", url.path)
                if not m or outer.unknown(m.group(1)):
                    return self.reply(404, {"message": "Not Found"})
                q = parse_qs(url.query)
                per_page, page = int(q.get("per_page", ["30"])[0]), int(q.get("page", ["1"])[0])
                mine = [c for c in outer.comments.values() if c["issue"] == (m.group(1), int(m.group(2)))]
                chunk = mine[(page - 1) * per_page: page * per_page]
                headers = {}
                if page * per_page < len(mine):
                    nxt = f"{outer.url}{url.path}?per_page={per_page}&page={page + 1}"
                    headers["link"] = f'<{nxt}>; rel="next", <{outer.url}{url.path}?page=99>; rel="last"'
                self.reply(200, [outer.public(c) for c in chunk], headers=headers)

            def do_POST(self):
                outer.requests.append(("POST", self.path))
                who = self._who()
                if who is None:
                    return self.reply(401, {"message": "Bad credentials"})
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments", self.path)
                body = self.json_body().get("body", "")
                if not m or outer.unknown(m.group(1)):
                    return self.reply(404, {"message": "Not Found"})
                if not who["write"]:
                    return self.reply(403, {"message": "Resource not accessible by integration"})
                if len(body) > 65536:
                    return self.reply(422, {"message": "Validation Failed"})
                comment = outer.add((m.group(1), int(m.group(2))), body, who["login"], who["type"])
                self.reply(201, outer.public(comment))

            def do_PATCH(self):
                outer.requests.append(("PATCH", self.path))
                who = self._who()
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/comments/(\d+)", self.path)
                comment = outer.comments.get(int(m.group(2))) if m else None
                body = self.json_body().get("body", "")
                if who is None or comment is None:
                    return self.reply(404, {"message": "Not Found"})
                if not who["write"] or comment["user"]["login"] != who["login"]:
                    return self.reply(403, {"message": "Resource not accessible by integration"})
                if len(body) > 65536:
                    return self.reply(422, {"message": "Validation Failed"})
                comment["body"] = body
                self.reply(200, outer.public(comment))

        self.server, self.url = serve(Handler)

    def add(self, issue, body, login, kind="User"):
        self.next_id += 1
        comment = {"id": self.next_id, "issue": issue, "body": body, "user": {"login": login, "type": kind},
                   "html_url": f"https://github.example/{issue[0]}/pull/{issue[1]}#issuecomment-{self.next_id}"}
        self.comments[self.next_id] = comment
        return comment

    def unknown(self, repo: str) -> bool:
        return self.repos is not None and repo not in self.repos

    @staticmethod
    def public(c):
        return {k: v for k, v in c.items() if k != "issue"}

    def close(self):
        self.server.shutdown()
        self.server.server_close()
