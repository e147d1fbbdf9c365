"""The per-worker fault-injecting proxy: routes, exchanges, SSE, sim model, trace."""
