// ralph-gate's listener for jest and vitest, preloaded into every node process of a gate's run
// through NODE_OPTIONS (--require). It changes nothing a runner prints or decides: it only
// writes, in told/<pid>-<thread>.jsonl next to this file, that a runner ran and each test the
// runner's own results say ran (passed or failed; not skipped, not todo), by file and name
// path, with whether it failed. Jest: the results `runCLI` (@jest/core) returns, whatever
// reporters the project chose. Vitest: the files `startTests` (@vitest/runner) returns in
// each worker, through a module resolve hook registered only in vitest's own processes (a
// hook costs every node process ~30 ms: tsc must not pay it).
'use strict';
const fs = require('fs');
const path = require('path');
const Module = require('module');

const here = __dirname;
// A run whose verdict decides a loop's end: jest reads no transform cache a run before it
// could have written (a `cacheDirectory` the project points anywhere), as `--no-cache`.
const fresh = fs.existsSync(path.join(here, 'fresh'));
function write(record) {
  try {
    // Named when first written: most node processes of a gate (tsc) never write.
    const { threadId } = require('worker_threads');
    const mine = path.join(here, 'told', `${process.pid}-${threadId}.jsonl`);
    fs.appendFileSync(mine, JSON.stringify(record) + '\n');
  } catch {
    // Unheard, never failed: the run's verdict is the runner's.
  }
}

function jestResults(results) {
  write({ runner: 'jest', failed: !results.success });
  for (const file of results.testResults || []) {
    for (const t of file.testResults || []) {
      if (t.status !== 'passed' && t.status !== 'failed') continue;
      // An expected failure (`test.failing`) that failed did not run as a test: as
      // pytest's xfail, it checks nothing the loop's start checked.
      if (t.status === 'passed' && t.failing) continue;
      write({ file: file.testFilePath, path: (t.ancestorTitles || []).concat([t.title]), failed: t.status === 'failed' });
    }
  }
}

const wrapped = new WeakMap();
function jestCore(exp) {
  if (!exp || typeof exp.runCLI !== 'function') return exp;
  if (!wrapped.has(exp)) {
    const runCLI = async function (...args) {
      if (fresh && args[0] && typeof args[0] === 'object') args[0] = { ...args[0], cache: false };
      const out = await exp.runCLI(...args);
      try {
        jestResults(out.results);
      } catch {
        // As above.
      }
      return out;
    };
    wrapped.set(exp, new Proxy(exp, { get: (t, k, r) => (k === 'runCLI' ? runCLI : Reflect.get(t, k, r)) }));
  }
  return wrapped.get(exp);
}

// Jest's module map opens every file of the project to list what it imports, which only
// `--onlyChanged`, `--findRelatedTests`, `--changedSince` and watch mode use: in a run that
// decides, and none of those asked, it is not made, so what the run opens is what its
// tests loaded (ralph-gate compares that with what they loaded at a loop's start).
const related = /^--?(o|onlyChanged|findRelatedTests|changedSince|lastCommit|watch|watchAll)(=|$)/;
function hasteMap(exp) {
  const map = exp && exp.default;
  if (!fresh || !map || typeof map.create !== 'function') return exp;
  if (process.argv.some((a) => related.test(a))) return exp;
  if (!wrapped.has(exp)) {
    const create = (options, ...rest) => map.create({ ...options, computeDependencies: false }, ...rest);
    const inner = new Proxy(map, { get: (t, k, r) => (k === 'create' ? create : Reflect.get(t, k, r)) });
    wrapped.set(exp, new Proxy(exp, { get: (t, k, r) => (k === 'default' ? inner : Reflect.get(t, k, r)) }));
  }
  return wrapped.get(exp);
}

const load = Module._load;
Module._load = function (request, ...rest) {
  const exp = load.call(this, request, ...rest);
  if (request === 'jest-haste-map') return hasteMap(exp);
  return request === '@jest/core' ? jestCore(exp) : exp;
};

// Vitest: a process whose program is vitest's (its CLI, a forks worker) marks its children
// and threads through the environment; those register the hook.
function vitestPackage() {
  const main = process.argv[1];
  if (!main || !main.includes('vitest')) return null;
  try {
    let dir = path.dirname(fs.realpathSync(main));
    for (let i = 0; i < 6; i++, dir = path.dirname(dir)) {
      const p = path.join(dir, 'package.json');
      if (fs.existsSync(p)) {
        const pkg = JSON.parse(fs.readFileSync(p, 'utf8'));
        return pkg.name === 'vitest' ? pkg : null;
      }
    }
  } catch {
    // Not vitest's.
  }
  return null;
}
function vitestProgram() {
  return vitestPackage() !== null;
}

// In a run that decides, vitest's CLI (4.1 and later, where the option exists: an older one
// refuses options it does not know) reads no module cache the project turned on
// (`experimental.fsModuleCache`), as a fresh clone's run has none.
function noModuleCache() {
  const pkg = vitestPackage();
  if (!fresh || !pkg) return;
  try {
    if (path.basename(fs.realpathSync(process.argv[1])) !== 'vitest.mjs') return;
  } catch {
    return;
  }
  const [major, minor] = String(pkg.version).split('.').map(Number);
  if (!(major > 4 || (major === 4 && minor >= 1))) return;
  const end = process.argv.indexOf('--');
  process.argv.splice(end === -1 ? process.argv.length : end, 0, '--experimental.fsModuleCache=false');
}
noModuleCache();
if (process.env.RALPH_GATE_VITEST === here || vitestProgram()) {
  process.env.RALPH_GATE_VITEST = here;
  try {
    Module.register(require('url').pathToFileURL(path.join(here, 'ralph_gate_vitest.mjs')).href, {
      data: { told: path.join(here, 'told') },
    });
  } catch {
    // A node without module hooks: unheard.
  }
}

// The files a test's code reads (its cases, its golden data), as the runner's tests read
// them: in a test runner's own processes only (node's test runner and the files it runs,
// jest's and vitest's workers), each read of a file under the project's root through `fs`
// is written with the innermost file of the project whose code made it. A read the module
// loader makes is an import, not data. ralph-gate keeps those whose reader is a file the
// runner reported tests from: part of the checks a loop's end puts back.
const root = process.env.RALPH_GATE_NODE_ROOT;
function testProcess() {
  const e = process.env;
  const runner = e.NODE_TEST_CONTEXT || e.JEST_WORKER_ID || e.VITEST_WORKER_ID || e.VITEST_POOL_ID;
  if (runner || process.execArgv.some((a) => a === '--test' || a.startsWith('--test-'))) return true;
  // Jest runs a single test file, or --runInBand, in its own process.
  const main = process.argv[1] || '';
  return /[\\/](jest|jest-cli)([\\/]|$)/.test(main) || vitestProgram();
}
function inProject(name) {
  return name.startsWith(root + path.sep) && !name.includes(`${path.sep}node_modules${path.sep}`);
}
// The module loader read it: an import (node's ES module loader reads through
// `fs.promises.readFile`, the CommonJS one through `fs.readFileSync`).
const LOADER = Symbol('loader');
// `past`: the module loader's own frames are passed over (a JSON file it reads for a
// require is data), rather than ending the search (a module it reads is code: LOADER).
function readerOf(past) {
  const [limit, prepare] = [Error.stackTraceLimit, Error.prepareStackTrace];
  Error.stackTraceLimit = 64;
  Error.prepareStackTrace = (_, sites) => sites;
  const holder = {};
  Error.captureStackTrace(holder, readerOf);
  const sites = holder.stack;
  [Error.stackTraceLimit, Error.prepareStackTrace] = [limit, prepare];
  for (const site of Array.isArray(sites) ? sites : []) {
    let name = site.getFileName();
    if (!name) continue;
    if (name.startsWith('node:internal/modules')) {
      if (past) continue;
      return LOADER;
    }
    if (name.startsWith('file:')) name = require('url').fileURLToPath(name);
    if (name !== __filename && inProject(name)) return name;
  }
  return null;
}
function watchReads() {
  const url = require('url');
  // Before any is wrapped: the listener's own calls are not the project's.
  const [readdirSync, realpathSync, lstatSync] = [fs.readdirSync, fs.realpathSync, fs.lstatSync];
  const noted = new Set();
  // Whether an open with `flags` can read what the file held: for reading (`r`, `r+`, `a+`,
  // O_RDONLY, O_RDWR), not one that writes only, truncates or makes a new file.
  const reads = (flags) => {
    if (typeof flags === 'string') return !flags.includes('x') && (flags.includes('r') || (flags.includes('a') && flags.includes('+')));
    if (typeof flags !== 'number') return true;
    const c = fs.constants;
    const made = c.O_CREAT | c.O_EXCL;
    return (flags & 3) !== c.O_WRONLY && !(flags & c.O_TRUNC) && (flags & made) !== made;
  };
  const named = (file) => {
    const name = path.resolve(file instanceof URL ? url.fileURLToPath(file) : String(file));
    // `/proc/self/cwd/cases.json`, `/dev/fd/3`: the file the kernel's link names.
    if (!name.startsWith('/proc/') && !name.startsWith('/dev/fd/')) return name;
    try {
      return realpathSync(name);
    } catch {
      return name;
    }
  };
  const note = (file, flags, past) => {
    if (typeof file === 'number' || file == null) return;
    if (!reads(flags)) return;
    const name = named(file);
    if (!inProject(name)) return;
    const by = readerOf(past);
    if (by === LOADER) {
      if (!noted.has(name)) write({ imported: name });
      noted.add(name);
      return;
    }
    if (!by || noted.has(name + '\0' + by)) return;
    noted.add(name + '\0' + by);
    write({ read: name, by });
  };
  const wrap = (obj, name, flagged) => {
    const original = obj && obj[name];
    if (typeof original !== 'function') return;
    const wrapper = {
      [name](...args) {
        try {
          note(args[0], flagged ? args[1] : undefined);
        } catch {
          // Unheard, never failed.
        }
        return original.apply(this, args);
      },
    }[name];
    obj[name] = wrapper;
  };
  // A file a runner's own module system (jest's) read and then compiled is a module the
  // tests imported, not their data: what is compiled is written too.
  const vm = require('vm');
  const compiled = (options) => {
    let name = typeof options === 'string' ? options : options && options.filename;
    if (typeof name !== 'string') return;
    if (name.startsWith('file:')) name = url.fileURLToPath(name);
    if (noted.has(name) || !inProject(name)) return;
    noted.add(name);
    write({ compiled: name });
  };
  const Script = vm.Script;
  vm.Script = class extends Script {
    constructor(code, options) {
      try {
        compiled(options);
      } catch {
        // As above.
      }
      super(code, options);
    }
  };
  for (const [name, at] of [['compileFunction', 2], ['runInThisContext', 1], ['runInContext', 2], ['runInNewContext', 2]]) {
    const original = vm[name];
    if (typeof original !== 'function') continue;
    vm[name] = { [name](...args) {
      try {
        compiled(args[at]);
      } catch {
        // As above.
      }
      return original.apply(this, args);
    } }[name];
  }
  for (const name of ['readFileSync', 'readFile', 'createReadStream']) wrap(fs, name, false);
  for (const name of ['openSync', 'open']) wrap(fs, name, true);
  wrap(fs.promises, 'readFile', false);
  // `require('./cases.json')`: read by the loader, never compiled: the requiring file's data.
  const json = Module._extensions['.json'];
  if (typeof json === 'function') {
    Module._extensions['.json'] = function (module, filename) {
      try {
        note(filename, undefined, true);
      } catch {
        // As above.
      }
      return json.call(this, module, filename);
    };
  }
  wrap(fs.promises, 'open', true);
  // A folder the project's code lists (`readdir`, `opendir`, and so `glob`s built on them):
  // the names of the files in it may be the tests' cases.
  const list = (folder) => {
    if (typeof folder === 'number' || folder == null) return;
    const name = named(folder);
    if (!inProject(name + path.sep) && name !== root) return;
    const by = readerOf(true);
    if (!by || by === LOADER || noted.has(name + '\0' + by)) return;
    noted.add(name + '\0' + by);
    for (const entry of readdirSync(name, { withFileTypes: true })) {
      if (entry.isFile()) write({ listed: path.join(name, entry.name), by });
    }
  };
  // `obj[name]`, told `hear(its first argument)` before each call.
  const heard = (obj, name, hear) => {
    const original = obj && obj[name];
    if (typeof original !== 'function') return;
    obj[name] = { [name](...args) {
      try {
        hear(args[0]);
      } catch {
        // As above.
      }
      return original.apply(this, args);
    } }[name];
  };
  for (const name of ['readdirSync', 'readdir', 'opendirSync', 'opendir']) heard(fs, name, list);
  for (const name of ['readdir', 'opendir']) heard(fs.promises, name, list);
  // A file the project's code asks of without opening it (`existsSync`, `statSync`'s size,
  // `accessSync`'s mode, `readlinkSync`'s target): the answer may be the tests' case, as
  // a listed name's is. Not a folder; a name that is not there yet is kept (a flag file
  // made later).
  const probe = (file) => {
    if (typeof file === 'number' || file == null) return;
    const name = named(file);
    if (!inProject(name)) return;
    const by = readerOf(true);
    if (!by || by === LOADER || noted.has(name + '\0' + by)) return;
    noted.add(name + '\0' + by);
    const kind = lstatSync(name, { throwIfNoEntry: false });
    if (!kind || !kind.isDirectory()) write({ listed: name, by });
  };
  for (const name of ['existsSync', 'exists', 'statSync', 'stat', 'lstatSync', 'lstat', 'accessSync', 'access', 'readlinkSync', 'readlink']) heard(fs, name, probe);
  for (const name of ['stat', 'lstat', 'access', 'readlink']) heard(fs.promises, name, probe);
  // A process the project's code starts (`execSync('cat cases.json')`): what it reads, no
  // frame of this one says; ralph-gate counts what no line accounts for as either the
  // tests' data or the code under test. The runners' own workers are not the project's.
  const cp = require('child_process');
  let spawned = false;
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
    const original = cp[name];
    if (typeof original !== 'function') continue;
    cp[name] = { [name](...args) {
      try {
        if (!spawned && readerOf(true)) {
          spawned = true;
          write({ spawned: true });
        }
      } catch {
        // As above.
      }
      return original.apply(this, args);
    } }[name];
  }
  try {
    Module.syncBuiltinESMExports();
  } catch {
    // An older node: ES modules' named imports of fs stay unwatched.
  }
}
if (root && testProcess()) watchReads();
