/**
 * ESM half of chaos-gate's Node instrumentation on a Node with only `module.register`
 * (Node 20): registered by install.cjs, run on Node's loader thread. Its `load` hook appends
 * one line to the source of each target module (a seam's file, a declared function's module:
 * transform.cjs), handing its bindings to the patch install.cjs put on globalThis; every other
 * module loads untouched. It rewrites text and nothing else, and any surprise leaves the
 * module as it was.
 */
import transform from './transform.cjs';

let targets = [];

export function initialize(data) {
  targets = Array.isArray(data?.targets) ? data.targets : [];
}

export async function load(url, context, nextLoad) {
  return transform.transformed(url, await nextLoad(url, context), targets);
}
