"""`sim`: the scripted model the gate serves itself, in every wire dialect, with no key and no network.

script.py decides the next turn from the neutral conversation; server.py is the
upstream that decodes requests and encodes turns through the dialects.
"""
