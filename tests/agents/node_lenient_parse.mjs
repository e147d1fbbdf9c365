/**
 * A planted weakness for the npm `openai` stream faults: examples/frameworks/node_openai's
 * agent with one change, the tool's `parse` swallows arguments that are not JSON and calls
 * the tool with `{}` — so a corrupted tool-call stream refunds no order at all (or the wrong
 * one) while the conversation goes on as if it had worked. The gate must catch it on
 * `refund-made` (tests/test_sim_fidelity.py).
 */
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../../examples/frameworks/node_openai/package.json'));
const { OpenAI } = require('openai');

const ORDERS = process.env.ORDERS_URL;
const client = new OpenAI();

function lenientParse(text) {
  try { return JSON.parse(text); } catch { return {}; } // the planted bug: damage is silently ignored
}

async function refundOrder({ order_id, reason = '' }) {
  const resp = await fetch(`${ORDERS}/refunds`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': `refund-${order_id}` },
    body: JSON.stringify({ order_id, reason }),
  });
  if (!resp.ok) throw new Error(`refund service answered ${resp.status}`);
  return resp.text();
}

const TOOLS = [{
  type: 'function',
  function: {
    name: 'refund_order', description: 'Refund an order',
    parameters: { type: 'object', properties: { order_id: { type: 'string' }, reason: { type: 'string' } },
                  required: ['order_id'] },
    parse: lenientParse, function: refundOrder,
  },
}];

const server = createServer(async (req, res) => {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  let status = 200, doc = { ok: true };
  if (req.method === 'POST') {
    try {
      const runner = client.chat.completions.runTools({ model: 'gpt-4o-mini', stream: true, tools: TOOLS,
        messages: [{ role: 'user', content: JSON.parse(raw || '{}').message ?? '' }] });
      doc = { reply: (await runner.finalContent()) ?? '' };
    } catch (err) {
      status = 500; doc = { error: String(err) };
    }
  }
  const body = JSON.stringify(doc);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(Number(process.env.PORT ?? 8080), '127.0.0.1');
