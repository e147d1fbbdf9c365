/**
 * chaos-gate's instrumentation for Node agents: loaded by `NODE_OPTIONS=--require <this file>`
 * (gate/instrument/environment.py), into every Node process the agent starts.
 *
 * This file only decides whether to install (install.cjs does the work), and is written in
 * the oldest JavaScript Node has parsed for a decade: a preload that fails to parse stops
 * Node before the agent's first line, so a Node too old for install.cjs must still be
 * able to read this one, fail the `require` below, and run the agent untouched.
 */
'use strict';

try {
  if (process.env.CHAOS_GATE_FN_URL) {
    require('./install.cjs');
  } else if (process.env.CHAOS_GATE_PEER_LOG) {
    require('./peers.cjs');  // a service the gate started: who connects to it (gate/services/peers.py)
  }
} catch (error) {
  // never break the agent: without the hooks it runs exactly as it would without the gate
}
