#!/usr/bin/env node
// Presents a solc-js package as the native `solc` command line, so that py-solc-x,
// ape-solidity and forge can use it offline. Only the three modes they call are served:
//   --version | --standard-json [--base-path DIR] [--no-import-callback] | --link --libraries NAME:ADDR ...
// --no-import-callback (native solc's flag, which the local explorer passes) reads no file at all:
// an import outside the input answers `Source "<path>" not found: File import callback not supported`.
// Usage: node solc-native.js <path-to-solc-npm-package> <solc args...>
// SOLC_NATIVE_CACHE=<dir> (the test suite's, for one run): a standard-json compile is kept there by
// its input, so the same input is compiled once a run whoever asks (Ape, forge, an explorer).
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const [pkgDir, ...args] = process.argv.slice(2);
let solcModule;
let importsRead = 0;

// Loading solc-js costs about half a CPU-second: only when it has something to do.
function solcjs() {
  return (solcModule ??= require(path.resolve(pkgDir)));
}

function nativeVersion() {
  // solc-js reports e.g. "0.8.26+commit.8a97fa7a.Emscripten.clang"; tools match the native form.
  return solcjs().version().replace(/\.Emscripten\.clang$/, '.Linux.g++');
}

function readStdin() {
  try { return fs.readFileSync(0, 'utf8'); } catch (e) { return ''; }
}

function basePathOf(argv) {
  const i = argv.indexOf('--base-path');
  return i >= 0 && argv[i + 1] ? argv[i + 1] : process.cwd();
}

function importCallback(base) {
  return (importPath) => {
    importsRead++;
    for (const candidate of [path.resolve(base, importPath), path.resolve(importPath)]) {
      if (fs.existsSync(candidate)) return { contents: fs.readFileSync(candidate, 'utf8') };
    }
    return { error: `File not found: ${importPath}` };
  };
}

function compile(input, base, readFiles) {
  const solc = solcjs();
  const major = solc.version().split('.').slice(0, 2).join('.');
  // Without a callback solc-js itself answers every import outside the input, as native solc does.
  const cb = readFiles ? importCallback(base) : undefined;
  // Before 0.6 solc-js exposed standard JSON through compileStandardWrapper.
  if (['0.4', '0.5'].includes(major) && solc.compileStandardWrapper) {
    return cb ? solc.compileStandardWrapper(input, cb) : solc.compileStandardWrapper(input);
  }
  return cb ? solc.compile(input, { import: cb }) : solc.compile(input);
}

function link(argv, bytecode) {
  const libs = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== '--libraries') continue;
    for (const item of (argv[i + 1] || '').split(/[\s,]+/).filter(Boolean)) {
      const sep = item.lastIndexOf(item.includes('=') ? '=' : ':');
      libs[item.slice(0, sep)] = item.slice(sep + 1);
    }
  }
  const solc = solcjs();
  const linker = solc.linkBytecode ? solc : require(path.join(path.resolve(pkgDir), 'linker.js'));
  return linker.linkBytecode(bytecode.trim(), libs);
}

// The base path is left out of the key: an answer is kept only when no import was read through it,
// so it did not shape the answer (the same project copied elsewhere compiles the same input).
function cacheKey(input) {
  const kept = args.filter((arg, i) => arg !== '--base-path' && args[i - 1] !== '--base-path');
  return crypto.createHash('sha256').update(JSON.stringify([path.resolve(pkgDir), kept, input])).digest('hex');
}

function compileKept(input) {
  const compiled = () => compile(input, basePathOf(args), !args.includes('--no-import-callback'));
  const dir = process.env.SOLC_NATIVE_CACHE;
  if (!dir) return compiled();
  const file = path.join(dir, cacheKey(input) + '.json');
  try { return fs.readFileSync(file, 'utf8'); } catch (e) { /* not kept yet */ }
  const output = compiled();
  if (importsRead === 0) {
    fs.mkdirSync(dir, { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(partial, output);
    fs.renameSync(partial, file);  // a reader sees the whole answer or none
  }
  return output;
}

try {
  if (args.includes('--version')) {
    process.stdout.write(`solc, the solidity compiler commandline interface\nVersion: ${nativeVersion()}\n`);
  } else if (args.includes('--standard-json')) {
    process.stdout.write(compileKept(readStdin()) + '\n');
  } else if (args.includes('--link')) {
    process.stdout.write(link(args, readStdin()) + '\n');
  } else {
    process.stderr.write('solc-native: only --version, --standard-json and --link are supported\n');
    process.exit(2);
  }
} catch (err) {
  process.stderr.write(`solc-native: ${err && err.message ? err.message : err}\n`);
  process.exit(1);
}
