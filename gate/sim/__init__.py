"""`sim`: the scripted model the gate serves itself, in every wire dialect, with no key and no network.

script.py decides the next turn from the neutral conversation; server.py is the
upstream that decodes requests and encodes turns through the dialects; protocols/ reads
and writes the text-borne tool protocols some frameworks speak inside a dialect (DSPy's
fields, smolagents' calls as text), so the same Script decides for them too.
"""
