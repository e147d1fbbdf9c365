"""Verdict: everything that judges what the runner ran (runs folded into cells, coverage, reach,
usage, soundness, the verdict, the shard merge). Pure.

Runs fold into cells (evaluate), cells into coverage, reach and usage, and all of it into the
verdict part (assemble), which soundness has the last word on; merge does the same over shard
reports. Nothing here starts a process or opens a socket: the runner (gate/runner) runs, this judges.
"""
