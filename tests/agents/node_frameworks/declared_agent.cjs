// The no-framework agent as CommonJS: its tool is refund_tools.cjs's `issueRefund`, looked up on its exports.
'use strict';

const tools = require('./refund_tools.cjs');

require('./chat_loop.cjs').main((name, args) => tools.issueRefund(args));
