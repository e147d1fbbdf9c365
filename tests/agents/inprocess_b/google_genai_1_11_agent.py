"""google_genai_agent.py on google-genai 1.11, the oldest release the seam supports.

1.11.0 is the first with both `invoke_function_from_dict_args` and its `_async` twin (the
functions the google-genai seam patches). The agent is the test env's, unchanged but for
what 1.11 could not yet do by itself: it read neither `GOOGLE_GEMINI_BASE_URL` (1.13 on) nor
`GEMINI_API_KEY`, so an app of its day that talked to another endpoint passed it, as its docs
said, in `http_options=types.HttpOptions(base_url=...)`, with the key in `GOOGLE_API_KEY`.
"""

import os

import google_genai_agent as agent
from front import main
from google import genai
from google.genai import types

agent.CLIENT = genai.Client(http_options=types.HttpOptions(base_url=os.environ["GOOGLE_GEMINI_BASE_URL"]))

if __name__ == "__main__":
    main(agent.answer, "google-genai 1.11")
