// The npm `openai` SDK as the judge of the proxy's Chat Completions answers (sim and faults).
// Prints one JSON line: what the SDK handed the caller, or the name of the error it raised.
// Usage: node judge.mjs <base_url> json|stream "<prompt>"
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../../examples/frameworks/node_openai/package.json"));
const { OpenAI } = require("openai");

const [baseURL, mode, prompt] = process.argv.slice(2);
const client = new OpenAI({ apiKey: "sk-test-not-real", baseURL, maxRetries: 0, timeout: 2000 });
const tools = [{ type: "function", function: { name: "refund_order", description: "Refund an order.",
  parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] } } }];
const request = { model: "gpt-4o-mini", messages: [{ role: "user", content: prompt }], tools };

async function observe() {
  if (mode === "json") {
    const choice = (await client.chat.completions.create(request)).choices[0];
    const calls = (choice.message.tool_calls ?? []).map((c) => [c.function.name, c.function.arguments]);
    return { text: choice.message.content, calls, finish: choice.finish_reason };
  }
  let text = "", args = "", finish = null;
  const stream = await client.chat.completions.create({ ...request, stream: true });
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      text += choice.delta?.content ?? "";
      args += (choice.delta?.tool_calls ?? []).map((c) => c.function?.arguments ?? "").join("");
      finish = choice.finish_reason ?? finish;
    }
  }
  return { text, args, finish };
}

try {
  console.log(JSON.stringify({ ok: await observe() }));
} catch (err) {
  console.log(JSON.stringify({ raised: err?.constructor?.name ?? String(err) }));
}
