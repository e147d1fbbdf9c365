"""Short fixture names — `world`, `clock`, `trace` — registered only when faultbench is not loaded.

faultbench's plugin owns those names; beside it, use `chaos_world`, `chaos_clock` and
`chaos_trace`, which are always there.
"""

from __future__ import annotations

import pytest


@pytest.fixture
def world(chaos_world):
    """The (first) live world of this chaos run (chaos_world)."""
    return chaos_world


@pytest.fixture
def clock(chaos_clock):
    """The run's world clock (chaos_clock)."""
    return chaos_clock


@pytest.fixture
def trace(chaos_trace):
    """The run's calls (chaos_trace)."""
    return chaos_trace
