/**
 * A link-shaping HTTP proxy for the capped-link benchmarks: it sits in front of the reference server and gives
 * every request an added delay (a far-away service's round trip) and every client connection a rate cap in each
 * direction (what one TCP connection gets over a long or shared path; the reason download accelerators open
 * several). It forwards the Host header unchanged, so the URLs the server builds from it (the pre-signed object
 * URLs of `/download` and `/upload`) point back through the proxy.
 *
 * Run as a process of its own (`node bench/lib/shaping-proxy.js --target URL [--rate BYTES] [--delay MS]`), it
 * prints `Listening on http://127.0.0.1:PORT` once it listens; `startShapingProxyProcess` does that for the
 * harness, so that the harness's own event loop never holds up the shaping.
 */
import { Agent, createServer, request } from 'node:http';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startListeningProcess } from './server.js';

/** Defaults: 40 MiB/s per connection and direction, 20 ms added to every request. */
export const DEFAULT_RATE_BYTES_PER_SECOND = 40 * 1024 * 1024;
export const DEFAULT_DELAY_MS = 20;

/** Bytes sent in one go: small enough that the cap holds within a couple of milliseconds. */
const PIECE_BYTES = 64 * 1024;
/**
 * Time a pacer may fall behind and catch up on. Timers fire up to a millisecond late; without this allowance
 * every late timer would be time lost and the link would run below its cap.
 */
const BURST_MS = 5;

/** Headers that describe one hop, not the message: each side of the proxy sets its own. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'expect', 'te', 'upgrade']);

function forwardedHeaders(headers) {
  const result = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_HEADERS.has(name)) result[name] = value;
  return result;
}

/** Spaces out the bytes of one direction of one connection so that they never exceed `rate` bytes a second. */
class Pacer {
  constructor(rate) {
    this.msPerByte = 1000 / rate;
    this.nextFree = 0;
  }

  /** Milliseconds to wait before sending `bytes`, their slot on the link reserved. */
  reserve(bytes) {
    const now = performance.now();
    this.nextFree = Math.max(this.nextFree, now - BURST_MS);
    const start = this.nextFree;
    this.nextFree += bytes * this.msPerByte;
    return start - now;
  }
}

/** Passes bytes on at the pace of the slowest of its pacers, in pieces of at most PIECE_BYTES. */
class Paced extends Transform {
  constructor(pacers) {
    super({ highWaterMark: 4 * PIECE_BYTES });
    this.pacers = pacers;
  }

  async _transform(chunk, _encoding, callback) {
    try {
      for (let start = 0; start < chunk.length; start += PIECE_BYTES) {
        const piece = chunk.subarray(start, start + PIECE_BYTES);
        const wait = Math.max(...this.pacers.map((pacer) => pacer.reserve(piece.length)));
        if (wait >= 1) await sleep(wait);
        this.push(piece);
      }
      callback();
    } catch (error) {
      callback(error);
    }
  }
}

/**
 * Starts the proxy on loopback in this process. `target` is the server's URL; `rate` (bytes a second, per
 * connection and direction; 0 for none), `linkRate` (bytes a second in each direction shared by all connections,
 * a link that one uncapped connection fills; 0, the default, for none) and `delayMs` shape the link. Resolves
 * with its URL and `close()`.
 */
export async function startShapingProxy({
  target,
  rate = DEFAULT_RATE_BYTES_PER_SECOND,
  linkRate = 0,
  delayMs = DEFAULT_DELAY_MS,
  port = 0,
}) {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  // One pacer per client connection and direction: requests on a keep-alive connection share its link.
  const pacers = new WeakMap();
  const pacersOf = (socket) => {
    let pair = pacers.get(socket);
    if (!pair) {
      pair = { down: new Pacer(rate), up: new Pacer(rate) };
      pacers.set(socket, pair);
    }
    return pair;
  };
  const link = { down: new Pacer(linkRate), up: new Pacer(linkRate) };
  const shaped = (pacer, shared) => {
    const pacers = [...(rate > 0 ? [pacer] : []), ...(linkRate > 0 ? [shared] : [])];
    return pacers.length > 0 ? [new Paced(pacers)] : [];
  };

  const handle = async (req, res) => {
    const pair = pacersOf(req.socket);
    if (delayMs > 0) await sleep(delayMs);
    const forward = request({
      agent,
      host: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: req.url,
      // Host stays as the client sent it: the server builds the URLs it hands out from it.
      headers: forwardedHeaders(req.headers),
    });
    res.on('close', () => {
      if (!res.writableFinished) forward.destroy();
    });
    forward.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardedHeaders(answer.headers));
      pipeline(answer, ...shaped(pair.down, link.down), res).catch(() => res.destroy());
    });
    forward.on('error', (error) => {
      if (res.headersSent) res.destroy();
      else {
        res.writeHead(502, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`shaping proxy: ${error.message}\n`);
      }
    });
    pipeline(req, ...shaped(pair.up, link.up), forward).catch(() => forward.destroy());
  };

  const server = createServer({ requestTimeout: 0, keepAliveTimeout: 5_000 }, (req, res) => {
    void handle(req, res);
  });
  // The proxy answers `Expect: 100-continue` itself and asks the server without it.
  server.on('checkContinue', (req, res) => {
    res.writeContinue();
    void handle(req, res);
  });
  server.on('connection', (socket) => socket.setNoDelay(true));
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}

/** Starts the proxy as a process of its own and resolves once it listens, with its URL and `close()`. */
export async function startShapingProxyProcess({
  target,
  rate = DEFAULT_RATE_BYTES_PER_SECOND,
  linkRate = 0,
  delayMs = DEFAULT_DELAY_MS,
}) {
  const args = [
    fileURLToPath(import.meta.url),
    '--target',
    target,
    '--rate',
    String(rate),
    '--link-rate',
    String(linkRate),
    '--delay',
    String(delayMs),
  ];
  const { url, close } = await startListeningProcess(args, 'shaping proxy');
  return { url, rate, linkRate, delayMs, close };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      target: { type: 'string' },
      rate: { type: 'string', default: String(DEFAULT_RATE_BYTES_PER_SECOND) },
      'link-rate': { type: 'string', default: '0' },
      delay: { type: 'string', default: String(DEFAULT_DELAY_MS) },
      port: { type: 'string', default: '0' },
    },
  });
  if (!values.target) {
    console.error(
      'Usage: node bench/lib/shaping-proxy.js --target URL [--rate BYTES_PER_SECOND] [--link-rate BYTES_PER_SECOND] [--delay MS] [--port N]',
    );
    process.exitCode = 2;
  } else {
    const proxy = await startShapingProxy({
      target: values.target,
      rate: Number(values.rate),
      linkRate: Number(values['link-rate']),
      delayMs: Number(values.delay),
      port: Number(values.port),
    });
    process.once('SIGTERM', () => void proxy.close());
    process.once('SIGINT', () => void proxy.close());
    console.log(`Listening on ${proxy.url}`);
  }
}
