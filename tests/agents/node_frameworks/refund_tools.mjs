// The ESM tools module of the no-framework agent (declared_agent.mjs): the gate is told
// `{kind: function, module: "./refund_tools.mjs", export: "issueRefund"}`. The agent calls
// `runTool`, which calls `issueRefund` from inside this module: the call the gate must reach.
import { writeRefund } from './ledger.mjs';

export const issueRefund = async ({ order_id }) => writeRefund(order_id);

export async function runTool(name, args) {
  if (name !== 'issue_refund') throw new Error(`no tool ${name}`);
  return issueRefund(args);
}
