/**
 * The bench's link-shaping proxy (bench/lib/shaping-proxy.js) as a process of its own in front of a test server:
 * a rate cap per connection, a cap shared by all connections, and a delay per request. Tests use it to make a
 * transfer last long enough to act on it, and assert what happened, never a speed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const PROXY = join(import.meta.dirname, '../../bench/lib/shaping-proxy.js');

/** A running shaping proxy. */
export interface ShapingProxy {
  url: string;
  child: ChildProcess;
  /** Ends the proxy process. */
  stop(): void;
}

/** Starts the shaping proxy in front of `target`; resolves once it listens. */
export function startShapingProxy(
  target: string,
  shaping: { rate: number; linkRate: number; delayMs: number },
): Promise<ShapingProxy> {
  const child = spawn(
    process.execPath,
    [
      PROXY,
      '--target',
      target,
      '--rate',
      String(shaping.rate),
      '--link-rate',
      String(shaping.linkRate),
      '--delay',
      String(shaping.delayMs),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
      const match = /^Listening on (http:\/\/\S+)$/m.exec(stdout);
      if (match) resolve({ url: match[1] as string, child, stop: () => child.kill('SIGTERM') });
    });
    child.once('exit', (code) => reject(new Error(`the shaping proxy exited with ${code}`)));
  });
}
