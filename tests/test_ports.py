"""Ports handed to agents and services come from below the kernel's ephemeral range, so no outgoing
connection of the run can take one between the gate's pick and the agent's bind (gate/agent/ports.py)."""

import socket

from gate.agent import ports


def test_a_port_is_below_the_ephemeral_range_and_bindable():
    low, _ = ports.ephemeral_range()
    picked = {ports.free_port() for _ in range(50)}
    assert all(max(1024, low - ports.SPAN) <= p < low for p in picked), sorted(picked)
    assert len(picked) > 40  # drawn at random, not one port over and over
    port = picked.pop()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_a_port_in_use_is_never_handed_out(monkeypatch):
    """The draw lands on a port something holds (an agent of another run): it is passed over."""
    with socket.socket() as holder:
        low, _ = ports.ephemeral_range()
        holder.bind(("127.0.0.1", low - 7))
        held = holder.getsockname()[1]
        draws = iter([held, held, low - 11])

        class Draw:
            def randrange(self, first, stop):
                assert first <= held < stop
                return next(draws)

        monkeypatch.setattr(ports, "_draw", Draw())
        assert ports.free_port() == low - 11


def test_an_agent_whose_port_an_outgoing_connection_took_is_the_race_this_avoids():
    """The kernel gives outgoing connections local ports from the ephemeral range: the range bind(0) uses."""
    low, high = ports.ephemeral_range()
    with socket.socket() as server, socket.socket() as client:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        client.connect(server.getsockname())
        assert low <= client.getsockname()[1] <= high
        assert low <= server.getsockname()[1] <= high
