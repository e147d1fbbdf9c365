"""The per-worker fault-injecting proxy: routes, exchanges, trace, and the upstreams it forwards to.

Upstreams: a real service over HTTP (upstream.py), a recording served back (replayed.py), a fake
tool world (world_upstream.py); the scripted model (gate/sim) plugs in the same way from above.
"""
