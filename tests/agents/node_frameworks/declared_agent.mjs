// The no-framework agent as an ES module: its tool is refund_tools.mjs's, called from inside that module.
import loop from './chat_loop.cjs';
import { runTool } from './refund_tools.mjs';

await loop.main(runTool);
