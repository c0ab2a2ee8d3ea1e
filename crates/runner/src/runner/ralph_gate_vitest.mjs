// Module hooks for vitest's processes (see ralph_gate_jstest.cjs): `@vitest/runner`, as
// vitest's own modules import it, is served through a module that re-exports it whole and
// notes the files `startTests` returns. The module is a real file beside this one (one per
// runner), so vitest's own loader (its vm pools) loads it as node does.
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';

let told = '';
export function initialize(data) {
  told = data.told;
}

const here = path.dirname(fileURLToPath(import.meta.url));

function wrapper(real) {
  const file = path.join(here, 'wrap', createHash('sha256').update(real).digest('hex').slice(0, 16) + '.mjs');
  if (!fs.existsSync(file)) {
    const url = JSON.stringify(real);
    const source = `
import * as real from ${url};
import fs from 'node:fs';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
export * from ${url};
const mine = path.join(${JSON.stringify(told)}, process.pid + '-' + threadId + '.jsonl');
const write = (r) => { try { fs.appendFileSync(mine, JSON.stringify(r) + '\\n'); } catch {} };
function walk(file, task, names) {
  for (const t of task.tasks || []) {
    if (t.type === 'test') {
      const state = t.result && t.result.state;
      // An expected failure (\`fails\`, however it was set) that failed did not run as a
      // test: as pytest's xfail, it checks nothing the loop's start checked.
      if (state === 'pass' && t.fails) continue;
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
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // Written whole under another name first: another process may be loading it.
    const part = `${file}.${process.pid}.part`;
    fs.writeFileSync(part, source);
    fs.renameSync(part, file);
  }
  return pathToFileURL(file).href;
}

export async function resolve(specifier, context, next) {
  if (specifier === '@vitest/runner' && context.parentURL && context.parentURL.includes('/vitest/dist/')) {
    const real = await next(specifier, context);
    // Hooks registered twice (a preload run again in the hooks' own thread) wrap once.
    if (real.url.startsWith(pathToFileURL(here).href)) return real;
    try {
      return { url: wrapper(real.url), shortCircuit: true };
    } catch {
      return real;
    }
  }
  return next(specifier, context);
}
