// A Vercel AI SDK agent as its docs write one (`ToolLoopAgent`, a `tool()` with a zod
// `inputSchema`, `openai(...)` from @ai-sdk/openai: the Responses API, reading $OPENAI_BASE_URL
// and $OPENAI_API_KEY), with one local tool `issue_refund`. Input on stdin, the answer on stdout.
//
// VARIANT=bug: every default. A tool that throws becomes a `tool-error` result for the model,
// and a model told "the tool failed" calls it again: a refund whose confirmation timed out after
// it was written is written twice.
// VARIANT=sound: the SDK's own `prepareStep` hook rewrites a timed-out refund's error, before the
// model reads it, into "sent, not confirmed: do not issue it again".
import { ToolLoopAgent, tool } from 'ai';
import { openai } from '@ai-sdk/openai';
import { z } from 'zod';
import { INSTRUCTIONS, MODEL, SOUND, readInput, writeRefund } from './ledger.mjs';

const PENDING = 'The refund request was sent but its confirmation did not arrive in time, so it may already be done. '
  + 'Do not issue it again; tell the customer it is being processed.';

function pendingNotFailed({ messages }) {
  const timedOut = (part) => part.type === 'tool-result' && part.toolName === 'issue_refund'
    && String(part.output?.type).startsWith('error') && /time ?out|timed out/i.test(JSON.stringify(part.output.value));
  return {
    messages: messages.map((m) => (m.role !== 'tool' ? m : {
      ...m, content: m.content.map((part) => (timedOut(part) ? { ...part, output: { type: 'text', value: PENDING } }
        : part)),
    })),
  };
}

const agent = new ToolLoopAgent({
  model: openai(MODEL),
  instructions: INSTRUCTIONS,
  tools: {
    issue_refund: tool({
      description: 'Refund an order.',
      inputSchema: z.object({ order_id: z.string().describe('the order to refund') }),
      execute: async ({ order_id }) => writeRefund(order_id),
    }),
  },
  ...(SOUND ? { prepareStep: pendingNotFailed } : {}),
});

const { text } = await agent.generate({ prompt: await readInput() });
console.log(text);
