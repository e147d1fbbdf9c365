/**
 * The agent side of an instrumented tool call in Node: ask the worker's proxy, obey, report back.
 *
 * The same /fn/ protocol as the Python bootstrap (gate/instrument/python/chaos_gate_agent/
 * client.py and call.py), so a fault means the same in a Node agent as in a Python one:
 *
 *     POST {CHAOS_GATE_FN_URL}/begin {id, tool, transport, framework, arguments, returns, hints}
 *         -> {"action": "run" | "raise" | "return", "sleep": s, ...}
 *     (the function runs, unless told not to)
 *     POST {CHAOS_GATE_FN_URL}/end {id, ok, type, value | error}
 *         -> {"action": "return" (unchanged) | "return" + value | "raise", "sleep": s}
 *
 * Waits are taken here with setTimeout, on the agent's own event loop, never in the proxy.
 * Requests go over node:http (not the global fetch, which an agent or its tests may have
 * replaced) on a kept-alive agent; Node unrefs idle sockets, so this never keeps an agent
 * alive. If the proxy cannot be reached the call runs unfaulted: instrumentation must
 * never be what breaks an agent. Failures raise Error subclasses named like the Python
 * ones (InjectedToolTimeout, ...), so a log reader is never fooled.
 */
'use strict';

const http = require('node:http');
const { randomUUID } = require('node:crypto');
const { AsyncLocalStorage } = require('node:async_hooks');

const URL_TEXT = process.env.CHAOS_GATE_FN_URL || '';
let target = null;
try {
  target = URL_TEXT ? new URL(URL_TEXT) : null;
} catch {
  target = null;
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const RUN = { action: 'run' };
const KEEP = { action: 'return' };
const inside = new AsyncLocalStorage(); // a tool calling another instrumented tool is one call

class InjectedToolError extends Error {
  constructor(message) { super(message); this.name = new.target.name; }
}
class InjectedToolNotFound extends InjectedToolError {
  constructor(message) { super(message); this.code = 'ENOENT'; }
}
class InjectedToolTimeout extends Error {
  constructor(message) { super(message); this.name = 'InjectedToolTimeout'; this.code = 'ETIMEDOUT'; }
}
class InjectedConnectionError extends Error {
  constructor(message) { super(message); this.name = 'InjectedConnectionError'; this.code = 'ECONNRESET'; }
}

function exceptionFor(answer) {
  const message = answer.message || 'tool failed (injected by chaos-gate)';
  const cls = { timeout: InjectedToolTimeout, connection: InjectedConnectionError,
    not_found: InjectedToolNotFound }[answer.kind] || InjectedToolError;
  return new cls(message);
}

function enabled() {
  return target !== null;
}

/** One JSON POST; null when the proxy is away or answers anything but 200 JSON. */
function post(path, doc, timeoutMs = 30000) {
  return new Promise((resolve) => {
    let body;
    try {
      body = Buffer.from(JSON.stringify(doc));
    } catch {
      return resolve(null);
    }
    const req = http.request({
      host: target.hostname, port: target.port, method: 'POST', agent,
      path: target.pathname.replace(/\/$/, '') + path,
      headers: { 'content-type': 'application/json', 'content-length': body.length },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve(res.statusCode === 200 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : null);
        } catch {
          resolve(null);
        }
      });
      res.on('error', () => resolve(null));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(null));
    req.end(body);
  });
}

function hello(seam, detail) {
  if (enabled()) post('/hello', { seam, pid: process.pid, runtime: `node ${process.version}`, ...(detail || {}) },
    5000).catch(() => {});
}

/** Arguments as JSON values; what does not serialize (a runner, a signal) is left out. */
function jsonable(value) {
  try {
    const text = JSON.stringify(value, (k, v) => (typeof v === 'function' || typeof v === 'bigint' ? undefined : v));
    return text === undefined ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

function isPlainJson(value) {
  if (value === null || ['number', 'boolean'].includes(typeof value)) return true;
  if (Array.isArray(value)) return true;
  return typeof value === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(value));
}

/** [type, JSON payload] of a tool's return value, as the proxy's faults will see it. */
function encode(value) {
  if (typeof value === 'string') return ['str', value];
  if (value instanceof Uint8Array) return ['bytes', Buffer.from(value).toString('base64')];
  if (value === undefined) return ['json', null];
  if (isPlainJson(value)) {
    try {
      const text = JSON.stringify(value);
      if (text !== undefined) return ['json', JSON.parse(text)];
    } catch { /* a cycle, a BigInt: opaque */ }
  }
  return ['opaque', value?.constructor?.name || typeof value];
}

function emptyLike(original) {
  if (typeof original === 'string') return '';
  if (original instanceof Uint8Array) return Buffer.alloc(0);
  if (Array.isArray(original)) return [];
  if (original && typeof original === 'object') return {};
  return null;
}

/** The value a 'return' answer asks for: the original value when unchanged. */
function decode(answer, original) {
  if (!('value' in answer) && !answer.empty) return original;
  if (answer.empty) return emptyLike(original);
  if (answer.as === 'bytes') return Buffer.from(answer.value, 'base64');
  return answer.value;
}

const sleep = (seconds) => (seconds > 0 ? new Promise((r) => setTimeout(r, seconds * 1000)) : null);

/**
 * A seam says how its calls look: {transport, framework, encode, decode, exception}; the
 * defaults are a plain function's.
 */
const PLAIN = { transport: 'function', framework: 'node', encode, decode, exception: exceptionFor };

const NO_CAUSE = Symbol('no cause');

/** Raise or return what the answer says (after its sleep has been taken). */
function outcome(seam, answer, original, cause = NO_CAUSE) {
  if (answer.action === 'raise') {
    const error = seam.exception(answer);
    if (cause !== NO_CAUSE) error.cause = cause;
    throw error;
  }
  if (cause !== NO_CAUSE && !('value' in answer) && !answer.empty) throw cause; // the tool's own failure
  return seam.decode(answer, original);
}

function newId() {
  return typeof randomUUID === 'function' ? randomUUID().replace(/-/g, '') : `${Date.now()}${Math.random()}`.slice(2);
}

function encoded(seam, value) {
  try {
    return seam.encode(value);
  } catch {
    return ['opaque', 'unencodable']; // our failure, never the tool's: its value is kept
  }
}

/** `run` is a zero-argument function returning the tool's value or a promise of it. */
async function call(seam, tool, args, run, returns = null, hints = null) {
  if (!enabled() || inside.getStore()) return run();
  return inside.run(true, async () => {
    const id = newId();
    const first = (await post('/begin', { id, tool, transport: seam.transport, framework: seam.framework,
      arguments: jsonable(args), returns, hints })) || RUN;
    await sleep(Number(first.sleep) || 0);
    if (first.action !== 'run') return outcome(seam, first, undefined);
    let value;
    try {
      value = await run();
    } catch (error) {
      const answer = (await post('/end', { id, ok: false, type: 'error',
        error: `${error?.name || 'Error'}: ${error?.message ?? error}` })) || KEEP;
      await sleep(Number(answer.sleep) || 0);
      return outcome(seam, answer, undefined, error);
    }
    const [type, payload] = encoded(seam, value);
    const answer = (await post('/end', { id, ok: true, type, value: payload })) || KEEP;
    await sleep(Number(answer.sleep) || 0);
    return outcome(seam, answer, value);
  });
}

const MARK = Symbol.for('chaos-gate.wrapped');

/**
 * `fn` wrapped so each call is one instrumented call of tool `name` (a string, or a function
 * giving it at call time) whose arguments are `argsOf(args)`; `name`, `length` and `this` kept.
 */
function wrapFunction(seam, fn, name, argsOf = (args) => args[0] ?? {}) {
  if (typeof fn !== 'function' || fn[MARK]) return fn;
  const wrapped = function chaosGateTool(...args) {
    return call(seam, typeof name === 'function' ? name() : name, argsOf(args), () => fn.apply(this, args));
  };
  Object.defineProperty(wrapped, 'name', { value: fn.name });
  Object.defineProperty(wrapped, 'length', { value: fn.length });
  wrapped[MARK] = true;
  return wrapped;
}

/** A copy of `obj` (prototype and every property descriptor kept) with `key` set to `value`. */
function copyWith(obj, key, value) {
  const descriptors = Object.getOwnPropertyDescriptors(obj);
  const old = descriptors[key] || { enumerable: true, writable: true, configurable: true };
  descriptors[key] = { enumerable: old.enumerable, writable: true, configurable: true, value };
  return Object.create(Object.getPrototypeOf(obj), descriptors);
}

module.exports = {
  InjectedToolError, InjectedToolNotFound, InjectedToolTimeout, InjectedConnectionError,
  MARK, PLAIN, call, copyWith, decode, enabled, encode, exceptionFor, hello, jsonable, post, wrapFunction,
};
