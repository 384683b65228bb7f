/** The reference server as a process of its own, as a user runs it: `mission-data serve` on loopback. */
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { BIN } from './measure.js';

/**
 * Starts a process that prints `Listening on <url>` once ready; resolves with that URL, its process id and a
 * `close` that stops it. `what` names it in the error when it exits before listening.
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
      const match = /^Listening on (https?:\/\/\S+)$/m.exec(stdout);
      if (match) resolve({ url: match[1], pid: child.pid, close });
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}: ${stderr.trim()}`)));
  });
}

/**
 * Starts `mission-data serve --store <storeDir> --port 0` (over HTTPS with `tls`: `{ cert, key }` PEM files)
 * and resolves once it listens, with its URL.
 */
export function startServerProcess(storeDir, tls) {
  return startListeningProcess(
    [
      BIN,
      'serve',
      '--store',
      storeDir,
      '--port',
      '0',
      '--quiet',
      ...(tls ? ['--tls-cert', tls.cert, '--tls-key', tls.key] : []),
    ],
    'mission-data serve',
  );
}

/** A self-signed certificate for 127.0.0.1 in `dir` (`cert.pem`, `key.pem`), made with openssl. */
export function makeCertificate(dir) {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1'].concat([
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]),
    { stdio: 'ignore' },
  );
  return { cert, key };
}
