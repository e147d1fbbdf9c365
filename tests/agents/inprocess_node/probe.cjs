/**
 * The CommonJS path (`require('openai')`) with a zodFunction tool, and an MCP client over an
 * in-memory transport (not stdio: the gate must leave it alone). Prints one JSON line.
 * Usage: node probe.cjs zod | memory
 */
'use strict';

const { issueRefund } = require('./refunds.cjs');

async function zod() {
  const OpenAI = require('openai');
  const { zodFunction } = require('openai/helpers/zod');
  const { z } = require('zod');
  const tools = [zodFunction({ name: 'issue_refund', parameters: z.object({ order_id: z.string() }),
    function: async ({ order_id }) => JSON.stringify(issueRefund(order_id)) })];
  const runner = new OpenAI({ maxRetries: 0 }).chat.completions.runTools({
    model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'refund order 1234' }], tools });
  return { out: await runner.finalContent() };
}

async function memory() {
  const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
  const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
  const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');
  const { z } = require('zod');
  const server = new McpServer({ name: 'refunds', version: '1.0.0' });
  server.registerTool('issue_refund', { inputSchema: { order_id: z.string() } },
    async ({ order_id }) => ({ content: [{ type: 'text', text: JSON.stringify(issueRefund(order_id)) }] }));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'probe', version: '1.0.0' });
  await client.connect(b);
  const result = await client.callTool({ name: 'issue_refund', arguments: { order_id: '1234' } });
  await client.close();
  return { out: result.content[0].text };
}

({ zod, memory })[process.argv[2]]()
  .then((doc) => console.log(JSON.stringify(doc)))
  .catch((error) => console.log(JSON.stringify({ error: error.name, cause: error.cause?.name,
    message: error.message })));
