// An agent with no framework: a hand-written tool loop over the Chat Completions API with the
// global fetch ($OPENAI_BASE_URL, $OPENAI_API_KEY), for `kind: function` (the gate has no seam
// for it, so the tool function itself is declared). `main(runTool)` reads the request on stdin,
// offers one tool `issue_refund(order_id)`, runs each call the model makes through `runTool`
// (what the agent's tools module exports), and prints the model's last answer. CommonJS, so
// the ESM and the CommonJS agent share it.
'use strict';

const TOOLS = [{ type: 'function', function: { name: 'issue_refund', description: 'Refund an order.',
  parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] } } }];

async function complete(messages) {
  const response = await fetch(`${process.env.OPENAI_BASE_URL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.OPENAI_API_KEY}` },
    body: JSON.stringify({ model: process.env.MODEL ?? 'gpt-4o-mini', messages, tools: TOOLS }),
  });
  return (await response.json()).choices[0].message;
}

async function main(runTool) {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const messages = [{ role: 'user', content: input.trim() }];
  for (let turn = 0; turn < 5; turn += 1) {
    const message = await complete(messages);
    messages.push(message);
    if (!message.tool_calls?.length) return console.log(message.content);
    for (const call of message.tool_calls) {
      let content;
      try {
        content = JSON.stringify(await runTool(call.function.name, JSON.parse(call.function.arguments)));
      } catch (error) {
        content = `Error: ${error.name}: ${error.message}`;
      }
      messages.push({ role: 'tool', tool_call_id: call.id, content });
    }
  }
  return console.log('gave up');
}

module.exports = { main };
