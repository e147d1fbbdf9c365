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
 * - ESM: a `load` hook appends one line to the seam's module source (transform.cjs) that hands
 *   its class, or a binding and its setter, to `patch` below once the module has evaluated:
 *   `module.registerHooks` in this thread where Node has it, else `module.register`
 *   (Node >= 20.6 / 18.19) and loader.mjs on Node's loader thread (see hookEsm for when).
 *   A seam patched on a class's prototype needs no rewrite: ESM modules are one instance per
 *   file URL in this thread, so the file this preload `require`s (require(esm)) is the very
 *   module the agent's `import` gets, and its class is patched before the agent's first line.
 * - An ESM-only package (`ai`) `require`d through require(esm): its one read is given the footer.
 * - Functions the config declares (`kind: function`): declared.cjs.
 *
 * On a Node without either hook API only the CommonJS path is reached; whatever fails,
 * the agent runs as it would without us (the failure is reported to the gate as
 * `node:<seam>:failed`, never thrown).
 */
'use strict';

const KEY = Symbol.for('chaos-gate.node');

// A seam: its patch module, its package, the files that define what it patches in each build
// (`esm`: the ESM one, in the package) and what the ESM line hands over: the module's own bindings,
// each behind `typeof` and the whole in a try, so a version whose module names them otherwise is
// reported, never broken; `setters` are module-level functions the seam replaces (an ESM function
// export cannot be reassigned from outside its module, but its own code can assign the binding, and
// importers see it live). `prototype`: the patch is on a class, so the ESM build is reached by
// importing `esm` (and `also`) from the package the agent would import (importSeams), no footer
// needed; `unless`: a file whose presence in the package makes its evaluation order matter.
function esmFooter(seam, names, typeNames = [], setters = []) {
  const pick = (list) => list.map((n) => `${n}: typeof ${n} === "undefined" ? undefined : ${n}`).join(', ');
  const types = typeNames.length ? `, types: { ${pick(typeNames)} }` : '';
  const set = setters.length ? `, set: { ${setters.map((n) => `${n}: (f) => { ${n} = f; }`).join(', ')} }` : '';
  const handed = `{ ${pick(names)}${types}${set} }`;
  return `try { globalThis[Symbol.for("chaos-gate.node")]?.patch("${seam}", ${handed}); } catch {}`;
}

const TARGETS = [
  {
    seam: 'openai', package: 'openai', module: './seams/openai.cjs',
    cjs: /[\\/]openai[\\/]lib[\\/]AbstractChatCompletionRunner\.js$/,
    esm: 'lib/AbstractChatCompletionRunner.mjs',
    exportsOf: (mod) => mod.exports,
    // openai 4's shims: `import 'openai/shims/web'` must run before any other openai module does
    prototype: { framework: 'node-openai', exportsOf: ([runner]) => runner, unless: '_shims' },
    footer: esmFooter('openai', ['AbstractChatCompletionRunner']),
  },
  {
    seam: 'mcp', package: '@modelcontextprotocol/sdk', module: './seams/mcp.cjs',
    cjs: /[\\/]@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]cjs[\\/]client[\\/]index\.js$/,
    esm: 'dist/esm/client/index.js',
    exportsOf: (mod) => ({ Client: mod.exports.Client, types: mod.require('../types.js') }),
    prototype: { framework: 'node-mcp', onSpawn: true, also: ['dist/esm/types.js'], exportsOf: ([client, types]) => ({ Client: client.Client, types }) },
    footer: esmFooter('mcp', ['Client'], ['McpError', 'ErrorCode']), // client/index imports both from types
  },
  {
    // ESM only: a `require('ai')` loads it through require(esm), where `requireEsm` rewrites it
    seam: 'ai', package: 'ai', module: './seams/ai.cjs',
    requireEsm: /[\\/]ai[\\/]dist[\\/]index\.js$/,
    esm: 'dist/index.js',
    footer: esmFooter('ai', ['executeToolCall'], [], ['executeToolCall']),
  },
  {
    seam: 'langchain', package: '@langchain/core', module: './seams/langchain.cjs',
    cjs: /[\\/]@langchain[\\/]core[\\/]dist[\\/]tools[\\/]index\.cjs$/,
    esm: 'dist/tools/index.js',
    exportsOf: (mod) => mod.exports,
    prototype: { framework: 'node-langchain', exportsOf: ([tools]) => tools },
    footer: esmFooter('langchain', ['StructuredTool']),
  },
  {
    seam: 'openai-agents', package: '@openai/agents-core', module: './seams/openai_agents.cjs',
    cjs: /[\\/]@openai[\\/]agents-core[\\/]dist[\\/]tool\.js$/,
    esm: 'dist/tool.mjs',
    exportsOf: (mod) => ({ tool: mod.exports.tool, set: { tool: (f) => { mod.exports.tool = f; } } }),
    footer: esmFooter('openai-agents', ['tool'], [], ['tool']),
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

function failed(seam, error) {
  report(`node:${seam}:failed`, { error: `${error?.name || 'Error'}: ${error?.message ?? error}`.slice(0, 300) });
}

// `onUse`: the framework name of a seam the preload loaded itself (importSeams), whose package the
// agent may never import: it is said to the gate at its first call, not now, so the reach line
// never names a framework the agent did not use.
function patch(seam, exportsOf, onUse = null) {
  const target = TARGETS.find((t) => t.seam === seam);
  try {
    const name = require(target.module).patch(exportsOf);
    if (name && onUse) require('./client.cjs').helloOnUse(onUse, name, { module: seam });
    else if (name) report(name, { module: seam });
  } catch (error) {
    failed(seam, error);
  }
}

/** The declared functions' rewrite targets (declared.cjs), by index; [] when none is declared. */
function declaredTargets() {
  if (!process.env.CHAOS_GATE_NODE_FUNCTIONS) return [];
  const declared = require('./declared.cjs');
  return declared.declarations().map((decl, index) => ({ decl, target: declared.targetOf(index) }));
}

function hookCommonJs() {
  const Module = require('node:module');
  const compile = Module.prototype._compile;
  if (typeof compile !== 'function') return;
  const declared = declaredTargets().filter(({ decl }) => !decl.esm);
  const transform = declared.length ? require('./transform.cjs') : null;
  Module.prototype._compile = function _compile(content, filename, ...rest) {
    const own = declared.length && typeof filename === 'string' ? declared.find(({ decl }) => decl.file === filename)
      : undefined;
    if (own) content = transform.rewrite(content, own.target); // its footer replaces the module's own binding
    const result = compile.call(this, content, filename, ...rest);
    if (own) require('./declared.cjs').patchExports(this, own.decl);
    const target = typeof filename === 'string' ? TARGETS.find((t) => t.cjs?.test(filename)) : undefined;
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

// An ESM-only package `require`d (Node >= 20.19 loads it through require(esm), which runs no
// module.register hook): its text is read by the CommonJS loader's `.js` handler, so the seam's
// footer is added to that one read of that one file.
function hookRequireEsm() {
  const Module = require('node:module');
  const fs = require('node:fs');
  const js = Module._extensions?.['.js'];
  const targets = TARGETS.filter((t) => t.requireEsm);
  if (typeof js !== 'function' || !targets.length) return;
  Module._extensions['.js'] = function js_(module, filename, ...rest) {
    const target = typeof filename === 'string' ? targets.find((t) => t.requireEsm.test(filename)) : undefined;
    if (!target) return js.call(this, module, filename, ...rest);
    const read = fs.readFileSync;
    fs.readFileSync = function readFileSync(file, ...args) {
      const text = read.call(this, file, ...args);
      if (file !== filename) return text;
      fs.readFileSync = read;
      const source = typeof text === 'string' ? text : text.toString('utf8');
      return /^\s*(import|export)\b/m.test(source) ? `${source}\n;${target.footer}\n` : text;
    };
    try {
      return js.call(this, module, filename, ...rest);
    } finally {
      fs.readFileSync = read;
    }
  };
}

// Where a package is installed for this process: a node_modules above its entry script or its cwd,
// or on NODE_PATH (any of them: the ESM hook must not miss one). `importedFrom` is where the
// agent's own `import` of it resolves from: its entry's folder (Node resolves from the entry's real
// path), or the cwd for code given on the command line.
function installedPackages(packages) {
  const fs = require('node:fs');
  const path = require('node:path');
  const starts = [process.cwd(), ...(process.env.NODE_PATH || '').split(path.delimiter).filter(Boolean)];
  if (process.argv[1]) starts.unshift(path.dirname(path.resolve(process.argv[1])));
  return packages.filter((pkg) => starts.some((start) => {
    for (let dir = start; ; dir = path.dirname(dir)) {
      if (fs.existsSync(path.join(dir, 'node_modules', pkg)) || fs.existsSync(path.join(dir, pkg))) return true;
      if (path.dirname(dir) === dir) return false;
    }
  }));
}

function importedFrom(pkg) {
  const fs = require('node:fs');
  const path = require('node:path');
  let start = process.cwd();
  if (process.argv[1]) {
    try {
      start = path.dirname(fs.realpathSync(path.resolve(process.argv[1])));
    } catch {
      start = path.dirname(path.resolve(process.argv[1]));
    }
  }
  for (let dir = start; ; dir = path.dirname(dir)) {
    const root = path.join(dir, 'node_modules', pkg);
    if (fs.existsSync(root)) return root;
    if (path.dirname(dir) === dir) return null;
  }
}

// The prototype seams (TARGETS' `prototype`) of `near`, each with the package root the agent
// imports it from, when every one of them can be reached by import (Node loads ESM by `require`,
// each is installed where the agent's import finds it, none holds its `unless`): else null.
function importable(near) {
  if (process.features?.require_module !== true) return null;
  const fs = require('node:fs');
  const path = require('node:path');
  const found = [];
  for (const target of near) {
    const root = target.prototype ? importedFrom(target.package) : null;
    if (!root || (target.prototype.unless && fs.existsSync(path.join(root, target.prototype.unless)))) return null;
    found.push({ target, root });
  }
  return found;
}

// A seam marked `onSpawn` (the MCP client: only its stdio sessions are instrumented, and every one
// spawns its server before its first call) is loaded at the process's first child_process.spawn,
// not at start: the MCP SDK costs a small ESM process near it ~100 ms it may never need. A class's
// prototype patched then reaches the instances made before.
function importSeams(found) {
  loadSeams(found.filter(({ target }) => !target.prototype.onSpawn));
  const later = found.filter(({ target }) => target.prototype.onSpawn);
  if (!later.length) return;
  const cp = require('node:child_process');
  const spawn = cp.spawn;
  cp.spawn = function spawn_(...args) {
    cp.spawn = spawn;
    try {
      loadSeams(later);
    } catch { /* never break the agent's spawn: its calls then go unreached, as without the seam */ }
    return spawn.apply(this, args);
  };
}

// require(esm) evaluates the file and its imports now, in this thread, into the one ESM cache the
// agent's own `import`s read: the class patched here is the agent's, whether its first line ran or not.
// A package that lacks the file (another version's layout) has nothing to patch, as with the footer.
function loadSeams(found) {
  const fs = require('node:fs');
  const path = require('node:path');
  const warn = process.emitWarning; // Node 22.12-22.14 warn of require(esm) from outside node_modules
  process.emitWarning = function emitWarning(warning, ...rest) {
    const type = typeof rest[0] === 'string' ? rest[0] : rest[0]?.type;
    return type === 'ExperimentalWarning' ? undefined : warn.call(this, warning, ...rest);
  };
  try {
    for (const { target, root } of found) {
      const files = [target.esm, ...(target.prototype.also || [])].map((file) => path.join(root, file));
      if (!fs.existsSync(files[0])) continue;
      let exportsOf;
      try {
        exportsOf = target.prototype.exportsOf(files.map((file) => require(file)));
      } catch (error) {
        failed(target.seam, error);
        continue;
      }
      patch(target.seam, exportsOf, target.prototype.framework);
    }
  } finally {
    process.emitWarning = warn;
  }
}

// Does this process load ESM from its start: an .mjs/.mts entry, a .js/.ts one under a package.json
// of "type": "module", `--input-type=module`, or an `--import` / `--loader` preload? A CommonJS entry
// reaches every seam through `require` (and `require` of an ESM-only package, hookRequireEsm), so
// it does not pay for the loader thread; what it `import()`s later is not reached on Node 20.
function esmEntry() {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS || '').split(/\s+/)];
  if (flags.some((f) => /^--(input-type=module|import|loader|experimental-loader)\b/.test(f))) return true;
  const main = process.argv[1];
  if (!main) return false;
  const fs = require('node:fs');
  let file = require('node:path').resolve(main);
  try {
    file = fs.realpathSync(file);
  } catch { /* a path Node itself will resolve (no extension): judged by its folder */ }
  return require('./transform.cjs').isEsmFile(file);
}

// ESM: with `module.registerHooks` (Node >= 22.15, 23.5) the rewrite runs in this thread, at
// no start-up cost, for `import` and `require` alike. With only `module.register` (Node 20) it
// takes Node's loader-hooks thread, a fixed cost on every start plus a thread hop per module
// loaded, so it is registered only where it can matter: an ESM entry with a seam package
// installed near it, or a declared function whose module is ESM. And not even there when every
// seam package near is a prototype seam importSeams can reach: then those are imported instead.
function hookEsm() {
  const Module = require('node:module');
  const declared = declaredTargets().filter(({ decl }) => decl.esm).map(({ target }) => target);
  const targets = [...TARGETS.map((t) => ({ suffix: `/${t.package}/${t.esm}`, footer: t.footer })), ...declared];
  if (typeof Module.registerHooks === 'function') {
    const { transformed } = require('./transform.cjs');
    Module.registerHooks({ load: (url, context, nextLoad) => transformed(url, nextLoad(url, context), targets) });
    globalThis[KEY].esm = 'registerHooks';
    return;
  }
  if (typeof Module.register !== 'function') return; // an older Node: CommonJS only
  const near = declared.length || !esmEntry() ? [] : installedPackages(TARGETS.map((t) => t.package));
  if (!declared.length && !near.length) return;
  // --require runs in every thread, Node's own loader-hooks thread too: hooks registered there
  // would chain a second copy of ours (one line appended twice). Asked here, not first: loading
  // node:worker_threads costs 2 ms, a tenth of a small agent's start on a recent Node.
  if (!require('node:worker_threads').isMainThread) return;
  const byImport = declared.length ? null : importable(TARGETS.filter((t) => near.includes(t.package)));
  if (byImport) {
    globalThis[KEY].esm = 'import'; // said to tests and to bench/bench_instrument.py
    importSeams(byImport);
    return;
  }
  globalThis[KEY].esm = 'register';
  const { pathToFileURL } = require('node:url');
  Module.register('./loader.mjs', { parentURL: pathToFileURL(__filename), data: { targets } });
}

function declare(...args) {
  require('./declared.cjs').declare(...args);
}

function install() {
  if (globalThis[KEY]) return;
  globalThis[KEY] = { patch, declare };
  const hooks = [reportClockRate, hookCommonJs, hookEsm];
  if (typeof require('node:module').registerHooks !== 'function') hooks.splice(2, 0, hookRequireEsm);
  for (const hook of hooks) {
    try {
      hook();
    } catch (error) {
      report('node:hooks:failed', { error: `${hook.name}: ${error?.message ?? error}`.slice(0, 300) });
    }
  }
}

install();
