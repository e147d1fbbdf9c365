"""Optional LLM paraphrase mutator over any OpenAI-compatible endpoint.

Off by default and never needed by the tests: the offline catalog is the product's
promise. When enabled, it is seeded through the request (`seed`, temperature 0) so
providers that honour seeds give repeatable paraphrases.
"""

from __future__ import annotations

import httpx

from gate.mutation.text import GuardedText

PROMPT = (
    "Paraphrase the user's request below. Keep its meaning and intent. Keep these exact "
    "substrings unchanged: {keep}. Reply with the paraphrase only.\n\nRequest: {text}"
)


class Paraphraser:
    def __init__(self, base_url: str, model: str, api_key: str | None, timeout: float = 30.0):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

    def __call__(self, guarded: GuardedText, rng) -> str | None:
        keep = ", ".join(repr(s) for s in guarded.protected_spans()) or "(none)"
        body = {
            "model": self.model,
            "temperature": 0,
            "seed": rng.randrange(2**31),
            "messages": [{"role": "user", "content": PROMPT.format(keep=keep, text=guarded.text)}],
        }
        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            resp = httpx.post(f"{self.base_url}/chat/completions", json=body, headers=headers, timeout=self.timeout)
            resp.raise_for_status()
            text = resp.json()["choices"][0]["message"]["content"].strip()
        except (httpx.HTTPError, KeyError, IndexError, ValueError):
            return None
        if not all(span in text for span in guarded.protected_spans()):
            return None
        return text
