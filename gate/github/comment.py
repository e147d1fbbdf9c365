"""The one sticky PR comment: found by a hidden marker among our own comments, updated in place.

"Our own" is decided by author login, never by the marker alone (anyone can paste a
marker): the configured login, else the token's user from GET /user, else — for the
workflow's GITHUB_TOKEN, where GET /user answers 403 — `github-actions[bot]`. A
read-only token (a fork's PR) is a notice, never a crash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

MARKER = "<!-- agent-chaos-gate:sticky-comment -->"
BOT_LOGIN = "github-actions[bot]"
MAX_BODY = 65_536
NEXT_LINK = re.compile(r'<([^>]+)>;\s*rel="next"')


@dataclass
class CommentResult:
    posted: bool
    action: str  # created | updated | skipped
    url: str | None = None
    notice: str | None = None


class GitHubApi:
    def __init__(self, api_url: str, token: str, timeout: float = 20.0):
        self.client = httpx.Client(base_url=api_url.rstrip("/"), timeout=timeout, trust_env=True, headers={
            "authorization": f"Bearer {token}", "accept": "application/vnd.github+json",
            "x-github-api-version": "2022-11-28", "user-agent": "agent-chaos-gate"})

    def own_login(self, configured: str | None) -> str:
        if configured:
            return configured
        resp = self.client.get("/user")
        if resp.status_code == 200:
            return resp.json()["login"]
        return BOT_LOGIN  # an installation token has no user

    def comments(self, repo: str, number: int):
        url = f"/repos/{repo}/issues/{number}/comments?per_page=100"
        while url:
            resp = self.client.get(url)
            resp.raise_for_status()
            yield from resp.json()
            m = NEXT_LINK.search(resp.headers.get("link", ""))
            url = m.group(1) if m else None

    def close(self):
        self.client.close()


def upsert_comment(api: GitHubApi, repo: str, number: int, body: str, mode: str = "update",
                   author: str | None = None) -> CommentResult:
    if MARKER not in body:
        body = MARKER + "\n" + body
    if len(body) > MAX_BODY:
        raise ValueError(f"comment body is {len(body)} characters; GitHub refuses over {MAX_BODY}")
    try:
        login = api.own_login(author)
        existing = None
        if mode == "update":
            existing = next((c for c in api.comments(repo, number)
                             if (c.get("user") or {}).get("login") == login and MARKER in (c.get("body") or "")), None)
        if existing is not None:
            resp = api.client.patch(f"/repos/{repo}/issues/comments/{existing['id']}", json={"body": body})
            action = "updated"
        else:
            resp = api.client.post(f"/repos/{repo}/issues/{number}/comments", json={"body": body})
            action = "created"
        resp.raise_for_status()
    except httpx.HTTPStatusError as exc:
        status = exc.response.status_code
        if status in (401, 403, 404):
            return CommentResult(False, "skipped", notice=(
                f"could not write the PR comment (HTTP {status}): the token is read-only or lacks "
                "`pull-requests: write` — expected on pull requests from forks. The step summary has the report."))
        return CommentResult(False, "skipped", notice=f"could not write the PR comment: HTTP {status} "
                                                      f"{exc.response.text[:200]}")
    except httpx.HTTPError as exc:
        return CommentResult(False, "skipped", notice=f"could not reach the GitHub API: {exc}")
    return CommentResult(True, action, resp.json().get("html_url"))
