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
 * Waits are taken here, on the agent's side, never in the proxy. Requests go over node:http
 * (not the global fetch, which an agent or its tests may have replaced) on a kept-alive agent;
 * Node unrefs idle sockets, so this never keeps an agent alive. If the proxy cannot be reached
 * the call runs unfaulted: instrumentation must never be what breaks an agent. Failures raise
 * Error subclasses named like the Python ones (InjectedToolTimeout, ...), so a log reader is
 * never fooled.
 *
 * A call is one sequence of steps (`steps`: the only place the proxy's answer is read), carried
 * out two ways. `call` (every framework seam: their frameworks await a tool) runs it on the
 * event loop, waits with setTimeout. `callSync` (a synchronous function the config declares,
 * whose callers use its value as it returns) blocks: its requests go through `postSync` (a
 * worker thread started on the first one, unref'd, does the HTTP while this thread sleeps in
 * Atomics.wait) and its waits are Atomics.wait too, as a slow synchronous function would take
 * them. If the function's value is a thenable the rest of the call goes to `call`'s driver and
 * the caller gets a promise, as the function itself gave.
 */
'use strict';

const http = require('node:http');
const { randomUUID } = require('node:crypto');
const { AsyncLocalStorage } = require('node:async_hooks');
const { isAsyncFunction } = require('node:util').types;

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

// postSync's worker: the thread that makes its requests (by `post`), started on first use (as is
// node:worker_threads, whose load alone costs a small agent's start 1-2 ms).
const READY_MS = 10000;
let courier = null; // {worker, port, count, seq, take}; false once it could not start or stopped answering

/** The worker's side: each request on `port` is sent by `post`; its answer is posted back, then signalled. */
function serve({ port, signal }) {
  const count = new Int32Array(signal);
  const reply = (message) => {
    port.postMessage(message);
    Atomics.add(count, 0, 1);
    Atomics.notify(count, 0);
  };
  port.on('message', ({ seq, path, doc, timeoutMs }) => {
    post(path, doc, timeoutMs).then((answer) => reply({ seq, answer }), () => reply({ seq, answer: null }));
  });
  reply({ seq: 0 }); // started
}

/** The message numbered `seq` from the worker, waiting in Atomics.wait up to `timeoutMs`; null if none came. */
function receive(c, seq, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = Atomics.load(c.count, 0); // read before looking: a reply after the look changes it
    for (let got = c.take(c.port); got; got = c.take(c.port)) {
      if (got.message?.seq === seq) return got.message;
    }
    const left = deadline - Date.now();
    if (left <= 0) return null;
    Atomics.wait(c.count, 0, seen, left);
  }
}

function startCourier() {
  const threads = require('node:worker_threads');
  const { port1, port2 } = new threads.MessageChannel();
  const signal = new SharedArrayBuffer(4);
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // the agent's preloads (ours among them) have no business in this thread
  const entry = `require(${JSON.stringify(__filename)}).serve(require('node:worker_threads').workerData);`;
  const worker = new threads.Worker(entry, { eval: true, workerData: { port: port2, signal }, transferList: [port2],
    env, execArgv: [], stdout: true, stderr: true });
  const c = { worker, port: port1, count: new Int32Array(signal), seq: 0, take: threads.receiveMessageOnPort };
  worker.on('error', () => {}); // a worker that dies is one that does not answer, or is known gone:
  worker.on('exit', () => {
    if (courier === c) courier = false;
  });
  worker.unref();
  port1.unref();
  if (receive(c, 0, READY_MS)) return c;
  worker.terminate().catch(() => {});
  return false;
}

/** `post`, blocking this thread until the answer came: null as `post` gives it, also when no worker can run. */
function postSync(path, doc, timeoutMs = 30000) {
  if (courier === null) {
    try {
      courier = startCourier();
    } catch {
      courier = false;
    }
  }
  const c = courier;
  if (!c) return null;
  const seq = ++c.seq;
  try {
    c.port.postMessage({ seq, path, doc, timeoutMs });
  } catch {
    return null; // a value structured clone refuses: as post() with a value JSON refuses
  }
  const got = receive(c, seq, timeoutMs + 5000); // post() gives up at timeoutMs: no answer means no worker
  if (got) return got.answer;
  courier = false;
  c.worker.terminate().catch(() => {});
  return null;
}

function hello(seam, detail) {
  if (enabled()) post('/hello', { seam, pid: process.pid, runtime: `node ${process.version}`, ...(detail || {}) },
    5000).catch(() => {});
}

// Seams the preload loaded before the agent asked for them (install.cjs importSeams), by the
// framework name their calls carry: each is said once, at its first call.
const onUse = new Map();
function helloOnUse(framework, seam, detail) {
  onUse.set(framework, [seam, detail]);
}
function used(framework) {
  const said = onUse.get(framework);
  if (!said) return;
  onUse.delete(framework);
  hello(...said);
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
const NAP = new Int32Array(new SharedArrayBuffer(4)); // never notified: Atomics.wait on it is a sleep
function sleepSync(seconds) {
  if (seconds > 0) Atomics.wait(NAP, 0, 0, seconds * 1000);
}

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

/**
 * One instrumented call as the steps it takes: it yields ['post', path, doc] (resumed with the
 * proxy's answer, or null), ['sleep', seconds] and ['run'] (resumed with the tool's value, or
 * thrown its error), and returns or throws what the caller gets. The drivers below carry the
 * steps out; what the answers mean is decided here alone.
 */
function* steps(seam, tool, args, returns, hints) {
  used(seam.framework);
  const id = newId();
  const first = (yield ['post', '/begin', { id, tool, transport: seam.transport, framework: seam.framework,
    arguments: jsonable(args), returns, hints }]) || RUN;
  yield ['sleep', Number(first.sleep) || 0];
  if (first.action !== 'run') return outcome(seam, first, undefined);
  let value;
  try {
    value = yield ['run'];
  } catch (error) {
    const answer = (yield ['post', '/end', { id, ok: false, type: 'error',
      error: `${error?.name || 'Error'}: ${error?.message ?? error}` }]) || KEEP;
    yield ['sleep', Number(answer.sleep) || 0];
    return outcome(seam, answer, undefined, error);
  }
  const [type, payload] = encoded(seam, value);
  const answer = (yield ['post', '/end', { id, ok: true, type, value: payload }]) || KEEP;
  yield ['sleep', Number(answer.sleep) || 0];
  return outcome(seam, answer, value);
}

/** The generator resumed with `[ok, value]`: sent the value, or thrown it. */
const advance = (gen, [ok, value]) => (ok ? gen.next(value) : gen.throw(value));

async function settled(run) {
  try {
    return [true, await run()];
  } catch (error) {
    return [false, error];
  }
}

const EVENT_LOOP = { post, sleep };
const BLOCKING = { post: postSync, sleep: sleepSync };

/** The rest of a call's steps, on the event loop; `resume` is what its last step came to (or a promise of it). */
async function finish(gen, run, resume) {
  let step = advance(gen, await resume);
  while (!step.done) {
    const [op, ...rest] = step.value;
    step = advance(gen, op === 'run' ? await settled(run) : [true, await EVENT_LOOP[op](...rest)]);
  }
  return step.value;
}

const isThenable = (value) => value !== null && ['object', 'function'].includes(typeof value)
  && typeof value.then === 'function';

/** `run` is a zero-argument function returning the tool's value or a promise of it. */
async function call(seam, tool, args, run, returns = null, hints = null) {
  if (!enabled() || inside.getStore()) return run();
  return inside.run(true, () => finish(steps(seam, tool, args, returns, hints), run, [true]));
}

function attempt(run) {
  try {
    return [true, run()];
  } catch (error) {
    return [false, error];
  }
}

/**
 * `call` for a synchronous `run`: returns or throws before it returns. A `run` that gives a
 * thenable hands the rest of the call (the end exchange, a rewrite of the value) to `call`'s
 * driver: the caller gets a promise, as `run` gave one. (A failure injected before `run` runs
 * is thrown: what `run` would give is not known until it runs.)
 */
function callSync(seam, tool, args, run, returns = null, hints = null) {
  if (!enabled() || inside.getStore()) return run();
  return inside.run(true, () => {
    const gen = steps(seam, tool, args, returns, hints);
    let step = advance(gen, [true]);
    while (!step.done) {
      const [op, ...rest] = step.value;
      if (op === 'run') {
        const [ok, value] = attempt(run);
        if (ok && isThenable(value)) return finish(gen, run, settled(() => value));
        step = advance(gen, [ok, value]);
      } else {
        step = advance(gen, [true, BLOCKING[op](...rest)]);
      }
    }
    return step.value;
  });
}

const MARK = Symbol.for('chaos-gate.wrapped');

/**
 * `fn` wrapped so each call is one instrumented call of tool `name` (a string, or a function
 * giving it at call time) whose arguments are `argsOf(args)`; `name`, `length` and `this` kept.
 * The wrapper is async (for a framework that awaits its tools), or with `keepSync` as `fn` is:
 * async for an async function, else synchronous (`callSync`).
 */
function wrapFunction(seam, fn, name, argsOf = (args) => args[0] ?? {}, { keepSync = false } = {}) {
  if (typeof fn !== 'function' || fn[MARK]) return fn;
  const through = keepSync && !isAsyncFunction(fn) ? callSync : call;
  const wrapped = function chaosGateTool(...args) {
    return through(seam, typeof name === 'function' ? name() : name, argsOf(args), () => fn.apply(this, args));
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
  MARK, PLAIN, call, callSync, copyWith, decode, enabled, encode, exceptionFor, hello, helloOnUse, jsonable, post,
  postSync,
  serve, wrapFunction,
};
