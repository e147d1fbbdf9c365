"""The one error a world operation answers with: an HTTP status and a message for the agent.

Apart from state.py because custom operations (custom.py) raise it too, and state.py calls them.
"""


class OperationError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
