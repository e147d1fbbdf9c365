/**
 * LangChain.js tools (@langchain/core 1.x `StructuredTool`), and so LangGraph.js's ToolNode.
 *
 * `StructuredTool.prototype.call` (what `tool.invoke` and ToolNode.runTool end in, for `tool()`,
 * DynamicStructuredTool, DynamicTool and subclasses alike) validates the model's arguments,
 * then runs `this._call(parsed, runManager, config)` inside its own `try`, and only then makes
 * the ToolMessage. That inner call is the seam, as in the Python seam (seams/langchain.py):
 * a fault raises where the tool body would, so `handleToolError` and ToolNode's
 * `handleToolErrors` (an error ToolMessage for the model) are what get tested, and a value
 * fault acts on what `_call` returned (for `responseFormat: "content_and_artifact"`, on the
 * content; the artifact stays the tool's).
 *
 * JavaScript has no class-creation hook, so each class's own `_call` is wrapped the first time
 * one of its instances is called: `call` is patched to find the prototype that owns the
 * `_call` it is about to run and wrap it there, once. The schema the model is sent is built
 * from `schema`, never from `_call`: it is unchanged. A `_call` calling `super._call` is one
 * call (an inner seam passes through).
 */
'use strict';

const { MARK, PLAIN, call, encode } = require('../client.cjs');

const SEAM = { ...PLAIN, framework: 'node-langchain' };
const PAIR = {
  ...SEAM,
  encode: (value) => encode(Array.isArray(value) && value.length === 2 ? value[0] : value),
  decode: (answer, original) => (Array.isArray(original) && original.length === 2
    ? [SEAM.decode(answer, original[0]), original[1]] : [SEAM.decode(answer, original), undefined]),
};

function instrumented(fn) {
  const wrapped = function _call(arg, runManager, config, ...rest) {
    const seam = this?.responseFormat === 'content_and_artifact' ? PAIR : SEAM;
    return call(seam, String(this?.name ?? this?.constructor?.name ?? 'tool'), arg ?? {},
      () => fn.call(this, arg, runManager, config, ...rest));
  };
  Object.defineProperty(wrapped, 'length', { value: fn.length });
  wrapped[MARK] = true;
  return wrapped;
}

/** Wrap the `_call` this tool would run, on the object that owns it (its class's prototype). */
function instrumentOwner(tool) {
  for (let owner = tool; owner && owner !== Object.prototype; owner = Object.getPrototypeOf(owner)) {
    if (!Object.hasOwn(owner, '_call')) continue;
    const fn = owner._call;
    if (typeof fn === 'function' && !fn[MARK]) owner._call = instrumented(fn);
    return;
  }
}

/** `exports` of @langchain/core's dist/tools/index (CJS or ESM build); the seam's name, or null. */
function patch(exports) {
  const proto = exports?.StructuredTool?.prototype;
  if (!proto || typeof proto.call !== 'function') {
    throw new Error('this @langchain/core version has no StructuredTool.prototype.call');
  }
  if (proto.call[MARK]) return null;
  const original = proto.call;
  proto.call = function callInstrumented(...args) {
    try {
      instrumentOwner(this);
    } catch { /* a frozen class: its calls run unseen, never broken */ }
    return original.apply(this, args);
  };
  proto.call[MARK] = true;
  return 'node:langchain.StructuredTool.call';
}

module.exports = { patch };
