/**
 * Node functions the config names: `tools: [{name, kind: function, module: "./tools.js",
 * export: "getWeather"}]`, the seam for the long tail (an in-house framework, a framework the
 * gate has no seam for, or none). The Node twin of gate/instrument/python/chaos_gate_agent/
 * declared.py.
 *
 * The gate hands them over in CHAOS_GATE_NODE_FUNCTIONS ({tool: {module, export}}). MODULE is
 * resolved as `require` would from the agent's working directory (a relative path, or a
 * package name); a module this process cannot resolve is simply never wrapped. The module is
 * changed where it is defined, so every way the agent reaches the function sees the wrapped
 * one, calls from inside the module too:
 *
 * - its text gets one footer line (transform.cjs) that replaces the module-level binding the
 *   export is bound to (`function f`, `let f`, `const f`, made `let`) with the wrapper: ESM
 *   importers read that live binding, and the module's own calls read it as well;
 * - CommonJS: after the module ran, `module.exports[export]` is replaced too (it captured the
 *   original, or is the only binding there is: `exports.f = function () {}`).
 *
 * The call is traced under the tool's own name (framework `declared`, gate/instrument/calls.py).
 * A wrapped function reports `function:<module>:<export>` to the gate, one that cannot be
 * wrapped `...:failed`; one the process never loads reports nothing, and the gate says the tool
 * was not reached. A wrapper is what the function is: an async function's is async, any other
 * function's is synchronous (it returns, or throws, before it returns: the gate is asked from a
 * worker thread while this one waits, client.cjs `callSync`), so a caller that uses the value
 * as it comes back sees what it always did; one that returns a promise gives a promise still.
 */
'use strict';

const { PLAIN, hello, wrapFunction } = require('./client.cjs');
const { isEsmFile } = require('./transform.cjs');

const ENV = 'CHAOS_GATE_NODE_FUNCTIONS';
const SEAM = { ...PLAIN, framework: 'declared' };
const IDENT = /^[A-Za-z_$][\w$]*$/;

let table = null; // [{tool, module, exportName, file, url, esm, reported}]

/** The declarations this process can resolve (read once). */
function declarations() {
  if (table) return table;
  table = [];
  let doc;
  try {
    doc = JSON.parse(process.env[ENV] || '{}');
  } catch {
    return table;
  }
  const path = require('node:path');
  const { createRequire } = require('node:module');
  const { pathToFileURL } = require('node:url');
  const resolve = createRequire(path.join(process.cwd(), '__chaos_gate__.js')).resolve;
  for (const [tool, spec] of Object.entries(doc && typeof doc === 'object' ? doc : {})) {
    const exportName = String(spec?.export ?? '');
    if (!spec?.module || !(IDENT.test(exportName))) continue;
    let file;
    try {
      file = resolve(String(spec.module));
    } catch {
      continue; // not resolvable from here: another process of the agent's, or not reached
    }
    table.push({ tool, module: String(spec.module), exportName, file, url: pathToFileURL(file).href,
      esm: isEsmFile(file), reported: false });
  }
  return table;
}

function report(decl, error) {
  if (decl.reported) return;
  decl.reported = true;
  const seam = `function:${decl.module}:${decl.exportName}`;
  if (error) hello(`${seam}:failed`, { error: String(error).slice(0, 300) });
  else hello(seam, { tool: decl.tool });
}

/** The rewrite target of a declared module (transform.cjs builds its footer from the module's text). */
function targetOf(index) {
  const decl = declarations()[index];
  return { url: decl.url, declare: { index, exportName: decl.exportName } };
}

function wrap(decl, fn) {
  return wrapFunction(SEAM, fn, decl.tool, (args) => (args.length === 1 && args[0] && typeof args[0] === 'object'
    && !Array.isArray(args[0]) ? args[0] : { args }), { keepSync: true });
}

/** Called by a declared module's footer, once its own code ran. */
function declare(index, fn, set) {
  const decl = declarations()[index];
  if (!decl) return;
  if (typeof fn !== 'function') {
    if (!decl.esm) return; // CommonJS: module.exports is looked at next (patchExports)
    report(decl, `${decl.exportName} is not a function bound in ${decl.module}`);
    return;
  }
  try {
    decl.original = fn;
    decl.wrapped = wrap(decl, fn);
    set(decl.wrapped);
  } catch (error) {
    decl.wrapped = undefined;
    report(decl, `${decl.exportName} could not be replaced: ${error?.message ?? error}`);
    return;
  }
  if (decl.esm) report(decl);
}

/** CommonJS, after the module ran: its exports hold the wrapper too. */
function patchExports(mod, decl) {
  const current = mod.exports?.[decl.exportName];
  try {
    if (typeof current !== 'function') throw new Error(`${decl.module} exports no function ${decl.exportName}`);
    const wrapped = decl.wrapped && [decl.wrapped, decl.original].includes(current) ? decl.wrapped
      : wrap(decl, current);
    if (current !== wrapped) mod.exports[decl.exportName] = wrapped;
    if (mod.exports[decl.exportName] !== wrapped) throw new Error(`exports.${decl.exportName} is read-only`);
  } catch (error) {
    report(decl, error?.message ?? error);
    return;
  }
  report(decl);
}

module.exports = { ENV, declarations, declare, patchExports, targetOf };
