"""Tool protocols that travel as text in the messages, not in native fields (DSPy's adapters, smolagents).

Read into the neutral conversation (gate/dialects/model.py) in one place, which both the sim
(to answer in the protocol) and the proxy (to learn the tools offered and called) use from below.
"""
