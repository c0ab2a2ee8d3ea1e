// Module hooks for vitest's processes (see ralph_gate_jstest.cjs): `@vitest/runner`, as
// vitest's own modules import it, is served through a module that re-exports it whole and
// notes the files `startTests` returns.
const WRAP = 'ralph-gate-vitest:';
let told = '';
export function initialize(data) {
  told = data.told;
}
export async function resolve(specifier, context, next) {
  if (specifier === '@vitest/runner' && context.parentURL && context.parentURL.includes('/vitest/dist/')) {
    const real = await next(specifier, context);
    // Hooks registered twice (a preload run again in the hooks' own thread) wrap once.
    if (real.url.startsWith(WRAP)) return real;
    return { url: WRAP + encodeURIComponent(real.url), shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (!url.startsWith(WRAP)) return next(url, context);
  const real = JSON.stringify(decodeURIComponent(url.slice(WRAP.length)));
  const source = `
import * as real from ${real};
import fs from 'node:fs';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
export * from ${real};
const mine = path.join(${JSON.stringify(told)}, process.pid + '-' + threadId + '.jsonl');
const write = (r) => { try { fs.appendFileSync(mine, JSON.stringify(r) + '\\n'); } catch {} };
function walk(file, task, names) {
  for (const t of task.tasks || []) {
    if (t.type === 'test') {
      const state = t.result && t.result.state;
      if (state === 'pass' || state === 'fail') write({ file: file.filepath, path: names.concat([t.name]), failed: state === 'fail' });
    } else walk(file, t, names.concat([t.name]));
  }
}
export async function startTests(...args) {
  const files = await real.startTests(...args);
  try {
    write({ runner: 'vitest' });
    for (const f of files) {
      // A file that failed as a whole (an import, a hook) failed the run, whatever its tests.
      if (f.result && f.result.state === 'fail') write({ runner: 'vitest', failed: true });
      walk(f, f, []);
    }
  } catch {}
  return files;
}
`;
  return { format: 'module', source, shortCircuit: true };
}
