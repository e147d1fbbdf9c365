// The CommonJS tools module of the no-framework agent (declared_agent.cjs), declared to the gate
// as `{kind: function, module: "./refund_tools.cjs", export: "issueRefund"}`; the agent calls it
// through `module.exports`.
'use strict';

const { appendFileSync } = require('node:fs');

async function issueRefund({ order_id }) {
  appendFileSync(process.env.LEDGER, `${order_id}\n`);
  return { status: 'refunded' };
}

module.exports = { issueRefund };
