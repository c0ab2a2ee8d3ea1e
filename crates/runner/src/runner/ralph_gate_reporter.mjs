// ralph-gate's reporter for node's test runner: the runner's own output as its default
// reporter writes it, and, on the side, each test that ran (passed or failed; not skipped,
// not todo, not a suite), by file and name path, in told/<pid>.jsonl next to this file.
import { tap, spec } from 'node:test/reporters';
import { Readable } from 'node:stream';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const mine = path.join(path.dirname(fileURLToPath(import.meta.url)), 'told', `${process.pid}.jsonl`);
const write = (record) => {
  try {
    fs.appendFileSync(mine, JSON.stringify(record) + '\n');
  } catch {
    // Unheard, never failed: the run's verdict is the runner's.
  }
};
write({ loaded: true });

function note(ev, stacks) {
  const d = ev.data || {};
  const key = d.file || '';
  if (!stacks.has(key)) stacks.set(key, []);
  const stack = stacks.get(key);
  if (ev.type === 'test:start') {
    stack.length = d.nesting;
    stack.push(d.name);
    return;
  }
  if (ev.type !== 'test:pass' && ev.type !== 'test:fail') return;
  if (d.skip || d.todo || (d.details && d.details.type === 'suite')) return;
  write({ file: key, path: stack.slice(0, d.nesting).concat([d.name]), failed: ev.type === 'test:fail' });
}

export default async function* ralphGate(source) {
  const stacks = new Map();
  async function* tee() {
    for await (const ev of source) {
      try {
        note(ev, stacks);
      } catch {
        // As above.
      }
      yield ev;
    }
  }
  // Node's own default: spec on a terminal, else TAP (spec everywhere from node 23).
  const major = Number(process.versions.node.split('.')[0]);
  if (major >= 23 || process.stdout.isTTY) {
    for await (const chunk of Readable.from(tee()).pipe(new spec())) yield chunk;
  } else {
    yield* tap(tee());
  }
}
