// A LangGraph.js agent as its quickstart writes one: a StateGraph over MessagesAnnotation, a
// ChatOpenAI model (@langchain/openai, reading $OPENAI_BASE_URL and $OPENAI_API_KEY) bound to one
// `tool()` from @langchain/core, and a tool node, looping until the model stops calling tools.
// Input on stdin, the answer on stdout.
//
// VARIANT=bug: the quickstart's own tool node (look the tool up, `await tool.invoke(call)`): a
// tool that throws throws out of the graph, and the agent crashes instead of answering.
// VARIANT=sound: LangGraph's prebuilt ToolNode, whose handleToolErrors (on by default) turns the
// exception into an error ToolMessage the model reads.
import { ChatOpenAI } from '@langchain/openai';
import { SystemMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { INSTRUCTIONS, MODEL, SOUND, readInput, writeRefund } from './ledger.mjs';

const issueRefund = tool(async ({ order_id }) => writeRefund(order_id), {
  name: 'issue_refund',
  description: 'Refund an order.',
  schema: z.object({ order_id: z.string().describe('the order to refund') }),
});
const tools = [issueRefund];
const toolsByName = Object.fromEntries(tools.map((t) => [t.name, t]));
const model = new ChatOpenAI({ model: MODEL }).bindTools(tools);

async function llmCall(state) {
  return { messages: [await model.invoke([new SystemMessage(INSTRUCTIONS), ...state.messages])] };
}

async function toolNode(state) {
  const results = [];
  for (const call of state.messages.at(-1).tool_calls ?? []) results.push(await toolsByName[call.name].invoke(call));
  return { messages: results };
}

const shouldContinue = (state) => (state.messages.at(-1)?.tool_calls?.length ? 'tools' : END);

const agent = new StateGraph(MessagesAnnotation)
  .addNode('llmCall', llmCall)
  .addNode('tools', SOUND ? new ToolNode(tools) : toolNode)
  .addEdge(START, 'llmCall')
  .addConditionalEdges('llmCall', shouldContinue, ['tools', END])
  .addEdge('tools', 'llmCall')
  .compile();

const result = await agent.invoke({ messages: [{ role: 'user', content: await readInput() }] });
console.log(result.messages.at(-1).content);
