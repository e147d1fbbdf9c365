#!/usr/bin/env bash
# libfaketime for the time-dilation tests (agent.time_scale): Debian's package, as the Action image ships it.
set -euo pipefail
if ! ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libfaketime >/dev/null
fi
