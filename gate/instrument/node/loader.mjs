/**
 * ESM half of chaos-gate's Node instrumentation, registered by register.cjs with
 * `module.register`. Its `load` hook appends one line to the source of each seam's module
 * (the file that defines the class whose method runs tools), handing that class to the
 * patch register.cjs installed on globalThis; every other module loads untouched. Runs on
 * Node's loader thread: it rewrites text and nothing else, and any surprise leaves the
 * module as it was.
 */
let targets = [];

export function initialize(data) {
  targets = Array.isArray(data?.targets) ? data.targets : [];
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  const target = targets.find((t) => url.startsWith('file:') && url.split('?')[0].endsWith(t.suffix));
  if (!target || result.format !== 'module' || result.source == null) return result;
  try {
    const source = typeof result.source === 'string' ? result.source : new TextDecoder().decode(result.source);
    return { ...result, source: `${source}\n;${target.footer}\n` };
  } catch {
    return result;
  }
}
