/**
 * The one source rewrite chaos-gate's Node instrumentation makes, shared by every path that
 * loads ESM text: loader.mjs (module.register's loader thread), module.registerHooks (in-thread,
 * newer Node) and install.cjs's `require()` of an ESM-only package (Node's require(esm)).
 *
 * A target is {suffix, footer} (a seam's file in its package: `footer` is appended, one line
 * that hands its bindings to install.cjs's `patch` once the module's own code ran) or
 * {url, declare: {index, exportName}} (a declared function's module: its footer hands the
 * binding the export is bound to, and a setter, to `declare`). That binding, if a module-level
 * `const`, is turned into a `let` first (`lets`), so the footer can
 * replace a declared function where the module itself (and every importer, through the live
 * binding) reads it: `const` and `let` differ in nothing else. Line numbers are kept.
 */
'use strict';

function targetFor(url, targets) {
  if (typeof url !== 'string' || !url.startsWith('file:')) return undefined;
  const bare = url.split('?')[0].split('#')[0];
  return targets.find((t) => (t.url ? bare === t.url : bare.endsWith(t.suffix)));
}

/** The module-level name a declared export is bound to, read off the module's text. */
function localName(source, exportName) {
  const escaped = exportName.replace(/\$/g, '\\$');
  const aliased = new RegExp(`export\\s*\\{[^}]*?\\b([A-Za-z_$][\\w$]*)\\s+as\\s+${escaped}\\b`).exec(source);
  if (aliased) return aliased[1];
  if (exportName === 'default') {
    const named = /export\s+default\s+(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)/.exec(source);
    return named ? named[1] : null;
  }
  return exportName;
}

/** A declared function's footer: its binding and a setter, handed to install.cjs's `declare`. */
function declaredTarget(source, { index, exportName }) {
  const local = localName(source, exportName);
  const call = `globalThis[Symbol.for("chaos-gate.node")]?.declare(${Number(index)}`;
  if (!local) return { lets: [], footer: `try { ${call}); } catch {}` };
  return { lets: [local], footer: `try { ${call}, typeof ${local} === "undefined" ? undefined : ${local}, `
    + `(f) => { ${local} = f; }); } catch {}` };
}

function rewrite(source, given) {
  const target = given.declare ? declaredTarget(source, given.declare) : given;
  let text = source;
  for (const name of target.lets || []) {
    text = text.replace(new RegExp(`\\bconst(\\s+${name.replace(/\$/g, '\\$')}\\s*=)`, 'g'), 'let$1');
  }
  return `${text}\n;${target.footer}\n`;
}

/** A `load` result with the target's rewrite applied; the result itself on any surprise. */
function transformed(url, result, targets) {
  const target = targetFor(url, targets);
  if (!target || !result || result.format !== 'module' || result.source == null) return result;
  try {
    const source = typeof result.source === 'string' ? result.source : new TextDecoder().decode(result.source);
    return { ...result, source: rewrite(source, target) };
  } catch {
    return result;
  }
}

/** Is `file` an ES module as Node loads it: .mjs/.mts, or .js/.ts under a package.json of "type": "module"? */
function isEsmFile(file) {
  const fs = require('node:fs');
  const path = require('node:path');
  if (/\.m[jt]s$/.test(file)) return true;
  if (/\.c[jt]s$/.test(file)) return false;
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg)) {
      try {
        return JSON.parse(fs.readFileSync(pkg, 'utf8')).type === 'module';
      } catch {
        return false;
      }
    }
    if (path.dirname(dir) === dir) return false;
  }
}

module.exports = { isEsmFile, localName, rewrite, targetFor, transformed };
