#!/usr/bin/env node
// Compiles for the solc shims (solc-native.js) in solc-js instances kept loaded, for the test suite:
// loading solc-js is most of a small compile's CPU, and a run compiles some three hundred inputs.
// Usage: node solc-daemon.js <dir> [workers]: listens on <dir>/daemon.sock until its parent exits.
// Each compile runs in a worker thread (a busy one is never shared); a compile whose shim went away
// (killed at a timeout) is stopped with its worker. The shims compile themselves when no daemon
// answers, so the daemon changes no answer, only where solc-js runs.
'use strict';
const fs = require('fs');
const net = require('net');
const path = require('path');
const { Worker, isMainThread, parentPort } = require('worker_threads');
const { compileStandard, DAEMON_SOCKET } = require('./solc-native.js');

if (!isMainThread) {
  parentPort.on('message', ({ pkgDir, args, cwd, input }) => {
    try {
      parentPort.postMessage(compileStandard(pkgDir, args, cwd, input));
    } catch (err) {
      parentPort.postMessage({ error: String(err && err.message ? err.message : err) });
    }
  });
  return;
}

const [dir, workersArg] = process.argv.slice(2);
const MAX_WORKERS = Math.max(1, Number(workersArg) || 4);
const socketPath = path.join(dir, DAEMON_SOCKET);
const logPath = path.join(dir, 'daemon.log');
const idle = [];
const queue = [];
let workers = 0;

function reply(job, answer) {
  job.done = true;
  if (!job.socket.destroyed) job.socket.end(JSON.stringify(answer));
}

// A line a compile, for whoever wonders where the compiles went (and the suite's test of this file).
function log(job, what) {
  const pkg = path.basename(job.request.pkgDir);
  const after = what === 'started' ? '' : ` after ${Date.now() - job.started} ms`;
  fs.appendFileSync(logPath, `${what} ${pkg}${after}\n`);
}

function run(worker, job) {
  job.started = Date.now();
  worker.job = job;
  job.worker = worker;
  worker.postMessage(job.request);
  log(job, 'started');
}

function newWorker() {
  workers++;
  const worker = new Worker(__filename);
  worker.job = null;
  worker.on('message', (answer) => {
    const job = worker.job;
    worker.job = null;
    if (job && !job.done) {
      reply(job, answer);
      log(job, answer.error ? 'failed' : 'compiled');
    }
    const next = queue.shift();
    if (next) run(worker, next);
    else idle.push(worker);
  });
  worker.on('error', () => {});  // 'exit' follows
  worker.on('exit', () => {
    workers--;
    const i = idle.indexOf(worker);
    if (i >= 0) idle.splice(i, 1);
    // No answer: the shim compiles itself, as it would without a daemon.
    if (worker.job && !worker.job.done) reply(worker.job, { error: 'the worker stopped' });
    const next = queue.shift();
    if (next) dispatch(next);
  });
  return worker;
}

function dispatch(job) {
  const worker = idle.pop() ?? (workers < MAX_WORKERS ? newWorker() : null);
  if (worker) run(worker, job);
  else queue.push(job);
}

// A request is one line of JSON; the shim keeps its end open until the answer, so a shim that goes
// away (killed at its timeout) closes the socket, and its compile is stopped.
const server = net.createServer((socket) => {
  const chunks = [];
  const job = { socket, done: false, worker: null, request: null };
  socket.on('data', (chunk) => {
    chunks.push(chunk);
    if (job.request || !chunk.includes(10)) return;
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      job.request = JSON.parse(text.slice(0, text.indexOf('\n')));
    } catch (e) {
      socket.destroy();
      return;
    }
    dispatch(job);
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    if (job.done) return;
    job.done = true;
    const queued = queue.indexOf(job);
    if (queued >= 0) queue.splice(queued, 1);
    if (job.worker && job.worker.job === job) {
      job.worker.terminate();  // stop the compile, not only the answer
      log(job, 'stopped');
    }
  });
});

fs.rmSync(socketPath, { force: true });
server.listen(socketPath);

// Never outlive the run that started it, however that run ended.
const parent = process.ppid;
function stop() {
  fs.rmSync(socketPath, { force: true });
  process.exit(0);
}
setInterval(() => { if (process.ppid !== parent) stop(); }, 1000);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
