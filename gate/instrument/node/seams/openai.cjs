/**
 * The npm `openai` package's tool runner: `client.chat.completions.runTools(...)` (and, in
 * the versions that have it, `client.beta.chat.completions.runTools`).
 *
 * Every runner (streaming or not, beta or not) runs its tools in
 * AbstractChatCompletionRunner.prototype._runTools(client, params, ...), which reads
 * `params.tools`; the patch hands it a copy of that list whose functions are
 * instrumented, so the agent's own tool objects are never changed (a tool list reused
 * across requests is wrapped afresh each time, never twice). Three shapes of tool: a
 * plain `{function: {function, parse?}}` (the call's first argument is the parsed
 * value, or the raw JSON text without `parse`), a `zodFunction(...)` tool (its callback is
 * `$callback`, a non-enumerable property, so copies keep every property descriptor),
 * and a ParsingToolFunction instance (copied with its prototype).
 *
 * What a failing tool raises here is what its body would: the runner rejects with it,
 * exactly as it does for a real failure, so the agent's own error handling is tested.
 */
'use strict';

const { MARK, PLAIN, copyWith, wrapFunction: wrap } = require('../client.cjs');

const SEAM = { ...PLAIN, framework: 'node-openai' };

function argumentsOf(first) {
  if (typeof first !== 'string') return first ?? {};
  try {
    return JSON.parse(first);
  } catch {
    return { raw: first }; // the model's text as it came, when it is not JSON
  }
}

function wrapFunction(fn, name) {
  return wrap(SEAM, fn, name, (args) => argumentsOf(args[0]));
}

function wrapTool(tool) {
  if (!tool || typeof tool !== 'object' || tool.type !== 'function' || !tool.function) return tool;
  const fn = tool.function;
  const name = fn.name || fn.function?.name || 'function';
  if (tool.$brand === 'auto-parseable-tool' && typeof tool.$callback === 'function') {
    return copyWith(tool, '$callback', wrapFunction(tool.$callback, name));
  }
  if (typeof fn.function === 'function' && !fn.function[MARK]) {
    return copyWith(tool, 'function', copyWith(fn, 'function', wrapFunction(fn.function, name)));
  }
  return tool;
}

/** `exports` of lib/AbstractChatCompletionRunner (CJS or ESM build); the seam's name, or null. */
function patch(exports) {
  const proto = exports?.AbstractChatCompletionRunner?.prototype;
  if (!proto || typeof proto._runTools !== 'function') {
    throw new Error('this openai version has no AbstractChatCompletionRunner.prototype._runTools');
  }
  if (proto._runTools[MARK]) return null;
  const runTools = proto._runTools;
  proto._runTools = function _runTools(client, params, ...rest) {
    if (params && Array.isArray(params.tools)) params = { ...params, tools: params.tools.map(wrapTool) };
    return runTools.call(this, client, params, ...rest);
  };
  proto._runTools[MARK] = true;
  return 'node:openai.runTools';
}

module.exports = { patch, wrapTool };
