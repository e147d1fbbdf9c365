/**
 * @modelcontextprotocol/sdk's `Client.prototype.callTool`, on clients over stdio only.
 *
 * An MCP server the agent spawns itself (StdioClientTransport) talks over pipes the proxy
 * never sees, so the seam is the client. Clients over HTTP are left alone: their
 * `tools/call` already crosses the proxy, and tracing it twice would double every count.
 * The transport is told by its class (StdioClientTransport or a subclass, by name: the
 * SDK's CommonJS and ESM builds each have their own class).
 *
 * Results cross as a JSON-RPC envelope, so the proxy's MCP-aware faults (an `isError`
 * result for `error`, a text item for `inject`) work on them unchanged; failures the SDK
 * itself would report (a timeout, a closed connection, a JSON-RPC error) raise its own
 * McpError with the SDK's ErrorCode. `listTools` results are remembered for their
 * readOnlyHint / idempotentHint annotations, which side_effect_once honours. The same
 * seam as gate/instrument/python/chaos_gate_agent/seams/mcp_client.py.
 */
'use strict';

const { call, encode, jsonable } = require('../client.cjs');

const MARK = Symbol.for('chaos-gate.wrapped');
const HINTS = new Map(); // tool name -> {read_only, idempotent}

function isStdio(transport) {
  for (let p = transport && Object.getPrototypeOf(transport); p; p = Object.getPrototypeOf(p)) {
    if (p.constructor?.name === 'StdioClientTransport') return true;
  }
  return false;
}

function seamFor(types) {
  const { McpError, ErrorCode } = types;
  const codes = { timeout: ErrorCode.RequestTimeout, connection: ErrorCode.ConnectionClosed,
    protocol: ErrorCode.ParseError };
  return {
    transport: 'mcp-stdio',
    framework: 'node-mcp',
    encode(value) {
      if (!value || typeof value !== 'object') return encode(value);
      return ['mcp', { jsonrpc: '2.0', id: 0, result: jsonable(value) }];
    },
    decode(answer, original) {
      if (answer.empty) return { content: [] };
      if (!('value' in answer)) return original;
      const envelope = answer.value;
      if (envelope && typeof envelope.result === 'object' && envelope.result !== null) return envelope.result;
      if (envelope && typeof envelope.error === 'object' && envelope.error !== null) {
        const { code, message, data } = envelope.error;
        throw new McpError(Number(code) || ErrorCode.InternalError, String(message ?? 'error'), data);
      }
      throw this.exception({ kind: 'protocol', message: "the server's answer is not a JSON-RPC result" });
    },
    exception(answer) {
      const code = Number(answer.code) || (codes[answer.kind] ?? ErrorCode.InternalError);
      return new McpError(code, answer.message || 'tool call failed (injected by chaos-gate)');
    },
  };
}

/** {Client, types} of the SDK's client/index and types modules; the seam's name, or null. */
function patch({ Client, types }) {
  const proto = Client?.prototype;
  if (!proto || typeof proto.callTool !== 'function' || typeof types?.McpError !== 'function') {
    throw new Error('this @modelcontextprotocol/sdk version has no Client.prototype.callTool or McpError');
  }
  if (proto.callTool[MARK]) return null;
  const seam = seamFor(types);
  const { callTool, listTools } = proto;
  proto.callTool = function callToolInstrumented(params, ...rest) {
    if (!isStdio(this.transport)) return callTool.call(this, params, ...rest);
    const name = params?.name;
    return call(seam, name, params?.arguments ?? {}, () => callTool.call(this, params, ...rest), 'mcp',
      HINTS.get(name) ?? null);
  };
  proto.callTool[MARK] = true;
  if (typeof listTools === 'function') {
    proto.listTools = async function listToolsInstrumented(...args) {
      const result = await listTools.apply(this, args);
      for (const tool of result?.tools ?? []) {
        HINTS.set(tool.name, { read_only: Boolean(tool.annotations?.readOnlyHint),
          idempotent: Boolean(tool.annotations?.idempotentHint) });
      }
      return result;
    };
  }
  return 'node:mcp.Client.callTool';
}

module.exports = { patch, isStdio };
