"""Replay: recorded sessions, their books and pins, export and import; served back by gate/proxy/replayed.py."""
