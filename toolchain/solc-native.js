#!/usr/bin/env node
// Presents a solc-js package as the native `solc` command line, so that py-solc-x,
// ape-solidity and forge can use it offline. Only the three modes they call are served:
//   --version | --standard-json [--base-path DIR] [--no-import-callback] | --link --libraries NAME:ADDR ...
// --no-import-callback (native solc's flag, which the local explorer passes) reads no file at all:
// an import outside the input answers `Source "<path>" not found: File import callback not supported`.
// Usage: node solc-native.js <path-to-solc-npm-package> <solc args...>
// SOLC_NATIVE_CACHE=<dir> (the test suite's, for one run): a standard-json compile is kept there by
// its input, so the same input is compiled once a run whoever asks (Ape, forge, an explorer); and
// when solc-daemon.js listens on <dir>/daemon.sock, a compile not kept yet runs there, in a solc-js
// already loaded, instead of loading one in this process (most of a small compile's CPU).
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const net = require('net');
const path = require('path');

const DAEMON_SOCKET = 'daemon.sock';

// Loading solc-js costs about half a CPU-second: only when it has something to do.
function solcjs(pkgDir) {
  return require(path.resolve(pkgDir));
}

function nativeVersion(pkgDir) {
  // solc-js reports e.g. "0.8.26+commit.8a97fa7a.Emscripten.clang"; tools match the native form.
  return solcjs(pkgDir).version().replace(/\.Emscripten\.clang$/, '.Linux.g++');
}

function readStdin() {
  try { return fs.readFileSync(0, 'utf8'); } catch (e) { return ''; }
}

function importCallback(base, cwd, read) {
  return (importPath) => {
    read.count++;
    for (const candidate of [path.resolve(cwd, base, importPath), path.resolve(cwd, importPath)]) {
      if (fs.existsSync(candidate)) return { contents: fs.readFileSync(candidate, 'utf8') };
    }
    return { error: `File not found: ${importPath}` };
  };
}

// One standard-json compile as the command line `solc <args>` run in `cwd` would answer it; here
// or in the daemon's workers. Returns the output and how many imports were read from disk.
function compileStandard(pkgDir, args, cwd, input) {
  const solc = solcjs(pkgDir);
  const major = solc.version().split('.').slice(0, 2).join('.');
  const i = args.indexOf('--base-path');
  const base = i >= 0 && args[i + 1] ? args[i + 1] : '.';
  const read = { count: 0 };
  // Without a callback solc-js itself answers every import outside the input, as native solc does.
  const cb = args.includes('--no-import-callback') ? undefined : importCallback(base, cwd, read);
  let output;
  // Before 0.6 solc-js exposed standard JSON through compileStandardWrapper.
  if (['0.4', '0.5'].includes(major) && solc.compileStandardWrapper) {
    output = cb ? solc.compileStandardWrapper(input, cb) : solc.compileStandardWrapper(input);
  } else {
    output = cb ? solc.compile(input, { import: cb }) : solc.compile(input);
  }
  return { output, importsRead: read.count };
}

function link(pkgDir, argv, bytecode) {
  const libs = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== '--libraries') continue;
    for (const item of (argv[i + 1] || '').split(/[\s,]+/).filter(Boolean)) {
      const sep = item.lastIndexOf(item.includes('=') ? '=' : ':');
      libs[item.slice(0, sep)] = item.slice(sep + 1);
    }
  }
  const solc = solcjs(pkgDir);
  const linker = solc.linkBytecode ? solc : require(path.join(path.resolve(pkgDir), 'linker.js'));
  return linker.linkBytecode(bytecode.trim(), libs);
}

// The base path is left out of the key: an answer is kept only when no import was read through it,
// so it did not shape the answer (the same project copied elsewhere compiles the same input).
function cacheKey(pkgDir, args, input) {
  const kept = args.filter((arg, i) => arg !== '--base-path' && args[i - 1] !== '--base-path');
  return crypto.createHash('sha256').update(JSON.stringify([path.resolve(pkgDir), kept, input])).digest('hex');
}

// The daemon's answer, or null when there is none to ask or it could not answer: then this process
// compiles, as it would without a daemon (its own bounds, its own errors).
function askDaemon(dir, request) {
  return new Promise((resolve) => {
    const chunks = [];
    const socket = net.createConnection(path.join(dir, DAEMON_SOCKET));
    socket.on('error', () => resolve(null));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('end', () => {
      try {
        const answer = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        resolve(typeof answer.output === 'string' ? answer : null);
      } catch (e) {
        resolve(null);
      }
    });
    socket.write(JSON.stringify(request) + '\n');  // kept open: closing it cancels the compile
  });
}

async function compileKept(pkgDir, args, input) {
  const dir = process.env.SOLC_NATIVE_CACHE;
  const here = () => compileStandard(pkgDir, args, process.cwd(), input);
  if (!dir) return here().output;
  const file = path.join(dir, cacheKey(pkgDir, args, input) + '.json');
  try { return fs.readFileSync(file, 'utf8'); } catch (e) { /* not kept yet */ }
  const request = { pkgDir: path.resolve(pkgDir), args, cwd: process.cwd(), input };
  const { output, importsRead } = (await askDaemon(dir, request)) ?? here();
  if (importsRead === 0) {
    fs.mkdirSync(dir, { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(partial, output);
    fs.renameSync(partial, file);  // a reader sees the whole answer or none
  }
  return output;
}

async function main(pkgDir, args) {
  if (args.includes('--version')) {
    process.stdout.write(`solc, the solidity compiler commandline interface\nVersion: ${nativeVersion(pkgDir)}\n`);
  } else if (args.includes('--standard-json')) {
    process.stdout.write((await compileKept(pkgDir, args, readStdin())) + '\n');
  } else if (args.includes('--link')) {
    process.stdout.write(link(pkgDir, args, readStdin()) + '\n');
  } else {
    process.stderr.write('solc-native: only --version, --standard-json and --link are supported\n');
    process.exitCode = 2;
  }
}

if (require.main === module) {
  const [pkgDir, ...args] = process.argv.slice(2);
  main(pkgDir, args).catch((err) => {
    process.stderr.write(`solc-native: ${err && err.message ? err.message : err}\n`);
    process.exitCode = 1;
  });
} else {
  module.exports = { compileStandard, DAEMON_SOCKET };
}
