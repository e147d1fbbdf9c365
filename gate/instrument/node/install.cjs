/**
 * chaos-gate's instrumentation for Node agents, required by register.cjs when the gate set
 * CHAOS_GATE_FN_URL. The agent's code does not change.
 *
 * Packages that publish two builds (the npm `openai` package: index.js and index.mjs;
 * @modelcontextprotocol/sdk: dist/cjs and dist/esm) load as two separate module graphs with
 * their own classes, and `import 'openai'` resolves to the ESM one, which `--require` alone
 * never sees. So each seam is reached on both paths, patched on the class that defines the
 * tool-invocation method, right after that module's own code ran:
 *
 * - CommonJS: Module.prototype._compile is wrapped; after a seam's file compiles, its
 *   `module.exports` is patched (one path test per compiled file, nothing more).
 * - ESM: `module.register` (Node >= 20.6 / 18.19), from the main thread, adds loader.mjs,
 *   whose `load` hook appends one line to the seam's module source that hands its class to
 *   `patch` below once the module has evaluated.
 *
 * The ESM hook is registered only when a seam package is installed where the process can
 * import it from (its loader thread is most of the preload's cost at start-up).
 * On a Node without `module.register` only the CommonJS path is reached; whatever fails,
 * the agent runs as it would without us (the failure is reported to the gate as
 * `node:<seam>:failed`, never thrown).
 */
'use strict';

const KEY = Symbol.for('chaos-gate.node');

// A seam: its patch module, the files that define its class in each build, and what the
// ESM line hands over: the module's own bindings, each behind `typeof` and the whole in a
// try, so a version whose module names them otherwise is reported, never broken.
function esmFooter(seam, names, typeNames = []) {
  const pick = (list) => list.map((n) => `${n}: typeof ${n} === "undefined" ? undefined : ${n}`).join(', ');
  const types = typeNames.length ? `, types: { ${pick(typeNames)} }` : '';
  return `try { globalThis[Symbol.for("chaos-gate.node")]?.patch("${seam}", { ${pick(names)}${types} }); } catch {}`;
}

const TARGETS = [
  {
    seam: 'openai', module: './seams/openai.cjs',
    cjs: /[\\/]openai[\\/]lib[\\/]AbstractChatCompletionRunner\.js$/,
    esm: '/openai/lib/AbstractChatCompletionRunner.mjs',
    exportsOf: (mod) => mod.exports,
    footer: esmFooter('openai', ['AbstractChatCompletionRunner']),
  },
  {
    seam: 'mcp', module: './seams/mcp.cjs',
    cjs: /[\\/]@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]cjs[\\/]client[\\/]index\.js$/,
    esm: '/@modelcontextprotocol/sdk/dist/esm/client/index.js',
    exportsOf: (mod) => ({ Client: mod.exports.Client, types: mod.require('../types.js') }),
    footer: esmFooter('mcp', ['Client'], ['McpError', 'ErrorCode']), // client/index imports both from types
  },
];

// Under agent.time_scale (gate/instrument/clock.py): this process's own clock, read twice TICK_MS of
// its time apart, so the gate can refuse a run whose agent shed libfaketime. The timer is unref'd:
// it never keeps an agent alive.
const TICK_MS = 500;
function reportClockRate() {
  if (!process.env.CHAOS_GATE_TIME_SCALE) return;
  const client = require('./client.cjs');
  const { performance } = require('node:perf_hooks');
  client.post('/clock', { pid: process.pid, n: 0, at: performance.now() / 1000 }, 5000);
  setTimeout(() => client.post('/clock', { pid: process.pid, n: 1, at: performance.now() / 1000 }, 5000),
    TICK_MS).unref();
}

function report(seam, detail) {
  try {
    require('./client.cjs').hello(seam, detail);
  } catch { /* the report is best effort */ }
}

function patch(seam, exportsOf) {
  const target = TARGETS.find((t) => t.seam === seam);
  try {
    const name = require(target.module).patch(exportsOf);
    if (name) report(name, { module: seam });
  } catch (error) {
    report(`node:${seam}:failed`, { error: `${error?.name || 'Error'}: ${error?.message ?? error}`.slice(0, 300) });
  }
}

function hookCommonJs() {
  const Module = require('node:module');
  const compile = Module.prototype._compile;
  if (typeof compile !== 'function') return;
  Module.prototype._compile = function _compile(content, filename, ...rest) {
    const result = compile.call(this, content, filename, ...rest);
    const target = typeof filename === 'string' ? TARGETS.find((t) => t.cjs.test(filename)) : undefined;
    if (target) {
      let exportsOf;
      try {
        exportsOf = target.exportsOf(this);
      } catch (error) {
        report(`node:${target.seam}:failed`, { error: String(error?.message ?? error).slice(0, 300) });
        return result;
      }
      patch(target.seam, exportsOf);
    }
    return result;
  };
}

// The packages whose ESM builds hold a seam (TARGETS' esm paths): without one of them installed
// where this process can import it from, the ESM hook has nothing to patch.
const SEAM_PACKAGES = ['openai', '@modelcontextprotocol/sdk'];

// Is a seam package installed where this process could import it: a node_modules above its
// entry script or its cwd, or on NODE_PATH? `module.register` starts Node's loader-hooks thread,
// +0.1-0.6 s on every start; most Node processes an agent starts (npm, a build tool, an agent on
// another library) import no seam package, so they do not pay it.
function seamPackageInstalled() {
  const fs = require('node:fs');
  const path = require('node:path');
  const starts = [process.cwd(), ...(process.env.NODE_PATH || '').split(path.delimiter).filter(Boolean)];
  if (process.argv[1]) starts.unshift(path.dirname(path.resolve(process.argv[1])));
  for (const start of starts) {
    for (let dir = start; ; dir = path.dirname(dir)) {
      if (SEAM_PACKAGES.some((pkg) => fs.existsSync(path.join(dir, 'node_modules', pkg))
        || fs.existsSync(path.join(dir, pkg)))) return true;
      if (path.dirname(dir) === dir) break;
    }
  }
  return false;
}

function hookEsm() {
  const { register } = require('node:module');
  if (typeof register !== 'function') return; // an older Node: CommonJS only
  // --require runs in every thread, Node's own loader-hooks thread too: hooks registered
  // there would chain a second copy of ours (one line appended twice)
  if (!require('node:worker_threads').isMainThread) return;
  if (!seamPackageInstalled()) return;
  globalThis[KEY].esm = true; // said to tests and to bench/bench_instrument.py
  const { pathToFileURL } = require('node:url');
  register('./loader.mjs', {
    parentURL: pathToFileURL(__filename),
    data: { targets: TARGETS.map((t) => ({ suffix: t.esm, footer: t.footer })) },
  });
}

function install() {
  if (globalThis[KEY]) return;
  globalThis[KEY] = { patch };
  for (const hook of [reportClockRate, hookCommonJs, hookEsm]) {
    try {
      hook();
    } catch (error) {
      report('node:hooks:failed', { error: `${hook.name}: ${error?.message ?? error}`.slice(0, 300) });
    }
  }
}

install();
