/**
 * An MCP server over stdio with one write (`issue_refund`) and one read (`get_refund`,
 * annotated readOnlyHint), on @modelcontextprotocol/sdk: what an agent spawns itself.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { issueRefund } from './refunds.cjs';

const server = new McpServer({ name: 'refunds', version: '1.0.0' });
server.registerTool('issue_refund', { description: 'Refund an order', inputSchema: { order_id: z.string() } },
  async ({ order_id }) => ({ content: [{ type: 'text', text: JSON.stringify(issueRefund(order_id)) }] }));
server.registerTool('get_refund', { description: 'Look a refund up', inputSchema: { order_id: z.string() },
  annotations: { readOnlyHint: true } },
async ({ order_id }) => ({ content: [{ type: 'text', text: `no refund for ${order_id} yet` }] }));
await server.connect(new StdioServerTransport());
