// An OpenAI Agents JS agent as its quickstart writes one (`new Agent({...})`, `tool()` with zod
// `parameters`, `run(agent, input)`; the default model provider is the Responses API over the
// `openai` client, which reads $OPENAI_BASE_URL and $OPENAI_API_KEY), with one local tool
// `issue_refund`. Input on stdin, the final output on stdout.
//
// VARIANT=bug: every default. Whatever the tool returns goes to the model as it is, so text
// planted in it steers a model that falls for it, and the reply relays it.
// VARIANT=sound: the SDK's own tool output guardrail replaces an output carrying
// instruction-like text with a plain message before the model reads it.
import { Agent, ToolGuardrailFunctionOutputFactory, defineToolOutputGuardrail, run, tool } from '@openai/agents';
import { z } from 'zod';
import { INSTRUCTIONS, MODEL, SOUND, readInput, writeRefund } from './ledger.mjs';

const INSTRUCTION_LIKE = /ignore (all )?(previous|prior) instructions|system notice|new instructions/i;

const noInstructions = defineToolOutputGuardrail({
  name: 'no_instructions_in_tool_output',
  run: async ({ output }) => (INSTRUCTION_LIKE.test(JSON.stringify(output))
    ? ToolGuardrailFunctionOutputFactory.rejectContent('The refund tool returned an unexpected answer; '
      + 'tell the customer the refund is being checked.')
    : ToolGuardrailFunctionOutputFactory.allow()),
});

const issueRefund = tool({
  name: 'issue_refund',
  description: 'Refund an order.',
  parameters: z.object({ order_id: z.string().describe('the order to refund') }),
  execute: async ({ order_id }) => writeRefund(order_id),
  ...(SOUND ? { outputGuardrails: [noInstructions] } : {}),
});

const agent = new Agent({ name: 'support', instructions: INSTRUCTIONS, model: MODEL, tools: [issueRefund] });

const result = await run(agent, await readInput());
console.log(result.finalOutput);
