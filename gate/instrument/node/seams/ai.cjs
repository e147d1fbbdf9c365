/**
 * The Vercel AI SDK (`ai` 7): a local tool's `execute`, as the SDK's tool loop runs it.
 *
 * generateText, streamText and ToolLoopAgent all run a tool call through one function of
 * ai/dist/index.js, `executeToolCall({toolCall, tools, ...})`, which looks the tool up by
 * `toolCall.toolName` and hands it to @ai-sdk/provider-utils `executeTool`, which calls
 * `tool.execute(input, options)`, all inside executeToolCall's own `try`: what it catches
 * becomes the `tool-error` part the model is shown. executeTool is not told the tool's name,
 * so the seam is executeToolCall: it is handed a copy of `tools` in which that one tool is a
 * copy (prototype and descriptors kept) whose `execute` is instrumented. The agent's tool
 * objects are never changed, and the request to the model (built from the same `tools`
 * elsewhere) is untouched, so its JSON Schema is the same bytes.
 *
 * `ai` 7 ships ESM only and executeToolCall is a module-local function, so no export can
 * reach it: the loader's footer on that file (and, for a `require('ai')` on a Node that
 * loads ESM through require, install.cjs's read of that file) hands the binding and a
 * setter to `patch`. A faulted call raises where `execute` would, so the SDK's own
 * tool-error path carries it to the model; a streaming tool (an async iterable `execute`)
 * is run to its last value inside the call, its preliminary results not forwarded.
 */
'use strict';

const { MARK, PLAIN, call, copyWith } = require('../client.cjs');

const SEAM = { ...PLAIN, framework: 'node-ai-sdk' };

function isAsyncIterable(value) {
  return value != null && typeof value[Symbol.asyncIterator] === 'function';
}

function instrumented(execute, name) {
  const wrapped = function execute_(input, options) {
    return call(SEAM, name, input, async () => {
      const result = execute.call(this, input, options);
      if (!isAsyncIterable(result)) return result;
      let last;
      for await (const output of result) last = output;
      return last;
    });
  };
  Object.defineProperty(wrapped, 'name', { value: execute.name });
  wrapped[MARK] = true;
  return wrapped;
}

/** {executeToolCall, set: {executeToolCall}} from ai/dist/index.js; the seam's name, or null. */
function patch({ executeToolCall, set }) {
  if (typeof executeToolCall !== 'function' || typeof set?.executeToolCall !== 'function') {
    throw new Error('this ai version has no executeToolCall in dist/index.js');
  }
  if (executeToolCall[MARK]) return null;
  const wrapped = function executeToolCallInstrumented(args, ...rest) {
    const name = args?.toolCall?.toolName;
    const tools = args?.tools;
    const tool = tools != null && typeof name === 'string' && Object.hasOwn(tools, name) ? tools[name] : undefined;
    if (!tool || typeof tool.execute !== 'function' || tool.execute[MARK]) {
      return executeToolCall.call(this, args, ...rest);
    }
    const copy = copyWith(tool, 'execute', instrumented(tool.execute, name));
    return executeToolCall.call(this, { ...args, tools: { ...tools, [name]: copy } }, ...rest);
  };
  wrapped[MARK] = true;
  set.executeToolCall(wrapped);
  return 'node:ai.executeToolCall';
}

module.exports = { patch };
