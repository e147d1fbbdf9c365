"""Replay: recorded sessions, served back hermetically; export, import, pins, sweeps."""
