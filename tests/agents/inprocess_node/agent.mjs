/**
 * A command agent (stdin: the request, stdout: one line) on the npm `openai` package whose
 * one tool, `issue_refund`, runs in its own process: no HTTP tool call for the proxy to see.
 *
 * AGENT_MODE picks how the tool is run: `runtools` (client.chat.completions.runTools, the
 * SDK's tool loop), `stream` (the same, streamed), or `mcp` (the tool is served by
 * mcp_server.mjs, spawned over stdio with @modelcontextprotocol/sdk, and called in the
 * agent's own loop). AGENT_BUGS=retry_on_error plants the double write: a failed tool run
 * is tried again although the first may have written. The sound agent reports that it
 * could not confirm the refund instead.
 */
import OpenAI from 'openai';
import { fileURLToPath } from 'node:url';
import { issueRefund } from './refunds.cjs';

const MODE = process.env.AGENT_MODE ?? 'runtools';
const RETRY = (process.env.AGENT_BUGS ?? '').split(',').includes('retry_on_error');
const MODEL = 'gpt-4o-mini';
const client = new OpenAI({ maxRetries: 0 });
const PARAMETERS = { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] };

async function withRetry(run) {
  try {
    return await run();
  } catch (error) {
    if (!RETRY) throw error;
    return run(); // the planted bug: the first run may have written
  }
}

async function viaRunTools(message) {
  const tools = [{ type: 'function', function: { name: 'issue_refund', description: 'Refund an order',
    parameters: PARAMETERS, parse: JSON.parse, function: async ({ order_id }) => issueRefund(order_id) } }];
  return withRetry(() => client.chat.completions.runTools({ model: MODEL, stream: MODE === 'stream', tools,
    messages: [{ role: 'user', content: message }] }).finalContent());
}

async function viaMcp(message) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const mcp = new Client({ name: 'agent', version: '1.0.0' });
  const server = fileURLToPath(new URL('./mcp_server.mjs', import.meta.url));
  await mcp.connect(new StdioClientTransport({ command: process.execPath, args: [server], env: process.env }));
  try {
    const { tools } = await mcp.listTools();
    const offered = tools.map((t) => ({ type: 'function', function: { name: t.name, parameters: t.inputSchema } }));
    const messages = [{ role: 'user', content: message }];
    for (;;) {
      const answer = await client.chat.completions.create({ model: MODEL, messages, tools: offered });
      const reply = answer.choices[0].message;
      messages.push(reply);
      if (!reply.tool_calls?.length) return reply.content;
      for (const call of reply.tool_calls) {
        const request = { name: call.function.name, arguments: JSON.parse(call.function.arguments) };
        const result = await withRetry(() => mcp.callTool(request));
        const text = result.content.map((c) => c.text ?? '').join('\n');
        messages.push({ role: 'tool', tool_call_id: call.id, content: result.isError ? `error: ${text}` : text });
      }
    }
  } finally {
    await mcp.close();
  }
}

let input = '';
for await (const chunk of process.stdin) input += chunk;
const order = /refund.*?(\d{3,})/i.exec(input)?.[1] ?? '?';
try {
  console.log(await (MODE === 'mcp' ? viaMcp(input) : viaRunTools(input)));
} catch (error) {
  console.log(`I could not confirm the refund for order ${order} (${error?.cause?.name ?? error?.name}).`);
  console.error(error); // for the gate's agent log
}
