/** The reference server as a process of its own, as a user runs it: `mission-data serve` on loopback. */
import { spawn } from 'node:child_process';
import { BIN } from './measure.js';

/**
 * Starts a process that prints `Listening on <url>` once ready; resolves with that URL and a `close` that stops
 * it. `what` names it in the error when it exits before listening.
 */
export function startListeningProcess(args, what, env = process.env) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const close = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /^Listening on (http:\/\/\S+)$/m.exec(stdout);
      if (match) resolve({ url: match[1], close });
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}: ${stderr.trim()}`)));
  });
}

/** Starts `mission-data serve --store <storeDir> --port 0` and resolves once it listens, with its URL. */
export function startServerProcess(storeDir) {
  return startListeningProcess(
    [BIN, 'serve', '--store', storeDir, '--port', '0', '--quiet'],
    'mission-data serve',
  );
}
