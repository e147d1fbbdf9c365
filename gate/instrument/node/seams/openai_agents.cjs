/**
 * OpenAI Agents JS (@openai/agents-core 0.x): function tools made by `tool({..., execute})`.
 *
 * tool() closes over `options.execute` and calls it from its private `_invoke`, whose rejection
 * the SDK's own failure handler catches (`errorFunction`, by default a message telling the model
 * the tool failed) and whose value its output guardrails and the model then see. So the seam is
 * tool() itself: it is handed a copy of the options whose `execute` is instrumented, and all the
 * rest of tool() (the name, the parameters' JSON Schema, strictness, guardrails, timeouts) runs on
 * the agent's own options, so the tool the model is offered is the same bytes. A fault raises where
 * `execute` would, inside `_invoke`: it takes the SDK's own errorFunction path.
 *
 * tool() is a function export, replaced where it is defined: `exports.tool` of dist/tool.js
 * (CommonJS; every caller reads it off that object) or the ESM binding in dist/tool.mjs (the
 * loader's footer hands `patch` a setter; every importer sees the live binding). Tools the SDK
 * builds for MCP servers (recognised by their `customDataExtractor`) are left alone: their calls
 * are the MCP client's (over stdio, the mcp seam; over HTTP, the wire).
 */
'use strict';

const { MARK, PLAIN, copyWith, wrapFunction } = require('../client.cjs');

const SEAM = { ...PLAIN, framework: 'node-openai-agents' };

function isMcpTool(options) {
  return options?.customDataExtractor?.name === 'extractCustomData';
}

/** {tool, set: {tool}} of agents-core's dist/tool module; the seam's name, or null. */
function patch({ tool, set }) {
  if (typeof tool !== 'function' || typeof set?.tool !== 'function') {
    throw new Error('this @openai/agents-core version has no tool() in dist/tool');
  }
  if (tool[MARK]) return null;
  const wrapped = function toolInstrumented(options, ...rest) {
    if (!options || typeof options !== 'object' || typeof options.execute !== 'function' || isMcpTool(options)) {
      return tool.call(this, options, ...rest);
    }
    let made = null; // the tool's name as tool() settles it, known once it returned
    const execute = wrapFunction(SEAM, options.execute, () => made?.name ?? options.name ?? options.execute.name);
    made = tool.call(this, copyWith(options, 'execute', execute), ...rest);
    return made;
  };
  Object.defineProperty(wrapped, 'name', { value: tool.name });
  wrapped[MARK] = true;
  set.tool(wrapped);
  return 'node:openai-agents.tool';
}

module.exports = { patch };
