/**
 * The refund every test agent here performs: one line appended to $REFUNDS_FILE, so the
 * tests count real writes on disk as well as in the gate's trace. CommonJS, so that both
 * the ESM agents and the CommonJS probe import the same code.
 */
'use strict';

const { appendFileSync, readFileSync } = require('node:fs');

exports.issueRefund = (orderId) => {
  const file = process.env.REFUNDS_FILE ?? 'refunds.txt';
  appendFileSync(file, `${orderId}\n`);
  const count = readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
  return { refund_id: `rf_${count}`, order_id: orderId, status: 'refunded' };
};
