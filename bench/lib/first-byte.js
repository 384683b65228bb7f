/**
 * Time to the first byte on disk: spawns a command and watches `dir` (recursively, every millisecond) until any
 * file in it holds a byte; resolves to the milliseconds from the spawn, then waits for the command to end.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

function anyByte(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { recursive: true });
  } catch {
    return false;
  }
  for (const entry of entries) {
    try {
      const stats = statSync(join(dir, entry));
      if (stats.isFile() && stats.size > 0) return true;
    } catch {
      // Renamed or removed meanwhile.
    }
  }
  return false;
}

/** Runs `command args` and resolves to `{ ms }`: spawn to the first byte of any file under `dir`. */
export function firstByte(command, args, dir, env = process.env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    let ms;
    const poll = () => {
      if (ms !== undefined) return;
      if (anyByte(dir)) ms = performance.now() - started;
      else setTimeout(poll, 1);
    };
    poll();
    child.once('exit', (code) => {
      if (ms === undefined && anyByte(dir)) ms = performance.now() - started;
      if (code !== 0 || ms === undefined)
        reject(new Error(`${command} exited with ${code}: ${stderr.trim()}`));
      else resolve({ ms });
    });
  });
}
