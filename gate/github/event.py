"""What the workflow event says: which repository and pull request we are commenting on."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass


@dataclass
class PullRequest:
    repo: str
    number: int
    from_fork: bool


def pull_request(env=os.environ) -> PullRequest | None:
    path = env.get("GITHUB_EVENT_PATH")
    if not path or not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            event = json.load(fh)
    except (OSError, ValueError):
        return None
    pr = event.get("pull_request")
    number = (pr or {}).get("number") or ((event.get("issue") or {}).get("pull_request") and event["issue"]["number"])
    if not number:
        return None
    repo = env.get("GITHUB_REPOSITORY") or (event.get("repository") or {}).get("full_name")
    head_repo = (((pr or {}).get("head") or {}).get("repo") or {}).get("full_name")
    return PullRequest(repo=repo, number=int(number), from_fork=bool(head_repo and head_repo != repo))
