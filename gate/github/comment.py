"""The one sticky PR comment: found by a hidden marker among our own comments, updated in place.

"Our own" is decided by author login, never by the marker alone (anyone can paste a
marker): the configured login, else the token's user from GET /user, else — for the
workflow's GITHUB_TOKEN, where GET /user answers 403 — `github-actions[bot]`. A
read-only token (a fork's PR) is a notice, never a crash; a refused request says why
in words a user can act on (bad token, no permission, wrong PR) as a warning. A body GitHub
would refuse (over 65,536 characters) is never sent: the renderer holds the comment to a budget
below that (gate/report/markdown.py) and links the run for the rest (`run_url`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

from gate.report.escape import MARKER

BOT_LOGIN = "github-actions[bot]"
MAX_BODY = 65_536
NEXT_LINK = re.compile(r'<([^>]+)>;\s*rel="next"')
SERVER = re.compile(r"https?://[A-Za-z0-9.-]+(?::\d+)?")
REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def run_url(env) -> str | None:
    """The workflow run's page — its step summary holds the whole report, its artifacts report.json — which a
    comment shortened to fit links to; None outside a run, or when a variable does not look like GitHub's own."""
    server, repo, run = (env.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    if not (SERVER.fullmatch(server) and REPO.fullmatch(repo) and run.isdigit()):
        return None
    return f"{server}/{repo}/actions/runs/{run}"


@dataclass
class CommentResult:
    posted: bool
    action: str  # created | updated | skipped
    url: str | None = None
    notice: str | None = None
    level: str = "notice"  # notice | warning: how the Action annotates `notice`


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


def refusal(status: int, repo: str, number: int, from_fork: bool, detail: str = "") -> CommentResult:
    """What a refused request means for the user, and how loudly to say it."""
    if status == 401:
        text, level = ("the token is invalid or expired (HTTP 401): check the `github-token` input", "warning")
    elif status == 403 and from_fork:
        text, level = ("this pull request comes from a fork, whose token is read-only (HTTP 403): "
                       "no PR comment is possible; the step summary has the report", "notice")
    elif status == 403:
        text, level = ("the token may not write comments (HTTP 403): grant `pull-requests: write` "
                       "in the workflow's `permissions`", "warning")
    elif status == 404:
        text, level = (f"pull request #{number} or repository {repo} was not found (HTTP 404), "
                       "or the token cannot see it", "warning")
    else:
        text, level = f"GitHub answered HTTP {status}: {detail[:200]}", "warning"
    return CommentResult(False, "skipped", notice=f"could not write the PR comment: {text}", level=level)


def upsert_comment(api: GitHubApi, repo: str, number: int, body: str, mode: str = "update",
                   author: str | None = None, from_fork: bool = False) -> CommentResult:
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
        return refusal(exc.response.status_code, repo, number, from_fork, exc.response.text)
    except httpx.HTTPError as exc:
        return CommentResult(False, "skipped", notice=f"could not reach the GitHub API: {exc}", level="warning")
    return CommentResult(True, action, resp.json().get("html_url"))
