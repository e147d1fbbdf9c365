"""`chaos-gate replay import`: read a trace file, write one session per trace, report what was skipped.

Exit 0 when every trace was imported, 1 when some were skipped (each named with its
reason), 2 when none could be: a partial import still leaves the good traces usable.
"""

from __future__ import annotations

import sys

from gate.errors import ConfigError
from gate.replay.session import write_session

SHOWN = 20  # sessions listed one by one; beyond that, a count (an import can hold thousands)


def tool_map(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        traced, sep, upstream = pair.partition("=")
        if not sep or not traced or not upstream:
            raise ConfigError(f"--tool-map {pair!r}: expected TRACED=UPSTREAM (e.g. refund_order=orders)")
        out[traced] = upstream
    return out


def run_import(args, console) -> int:
    mapping = tool_map(args.tool_map)
    if args.otel is not None:
        from gate.replay.importers.otel import import_otel

        result = import_otel(args.otel, args.llm_target, mapping)
    else:
        from gate.replay.importers.langsmith import import_langsmith

        result = import_langsmith(args.langsmith, args.llm_target, mapping)
    for n, session in enumerate(result.sessions):
        path = write_session(session, args.output_dir)
        if n < SHOWN:
            console.print(f"wrote {path}", highlight=False)
    for trace, reason in result.skipped:
        sys.stderr.write(f"chaos-gate: skipped trace {trace}: {reason}\n")
    console.print(f"{len(result.sessions)} session(s) imported to {args.output_dir}, "
                  f"{len(result.skipped)} trace(s) skipped", highlight=False)
    return result.exit_code
