#!/usr/bin/env bash
# Install Debian's chromium for the report.html test (tests/test_html_report.py drives it
# headless over the DevTools protocol). Idempotent: an installed chromium is reused.
set -euo pipefail
if ! command -v chromium >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
echo "chromium ready: $(chromium --version 2>/dev/null || echo unknown)"
