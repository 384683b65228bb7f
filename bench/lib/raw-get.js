/**
 * The least a Node client can do to GET a URL: a `net`/`tls` socket reading into one reused buffer (`onread`),
 * a request head written by hand, the status line and Content-Length read from the answer's head, and every
 * body chunk handed to `onBody` as a view of that buffer (valid during the call). Redirects are followed. One
 * connection per origin is kept alive and reused. For the bench's floors only: no timeouts, no chunked bodies.
 */
import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

const BUFFER_BYTES = 1024 * 1024;

function open(url) {
  const buffer = Buffer.allocUnsafeSlow(BUFFER_BYTES);
  const connection = { buffer, fill: 0, handler: undefined, socket: undefined };
  const tls = url.protocol === 'https:';
  const port = Number(url.port) || (tls ? 443 : 80);
  const onread = {
    buffer: () => (connection.fill > 0 ? buffer.subarray(connection.fill) : buffer),
    callback: (n) => connection.handler(n),
  };
  connection.socket = tls
    ? tlsConnect({ host: url.hostname, port, servername: url.hostname, onread, noDelay: true })
    : tcpConnect({ host: url.hostname, port, onread, noDelay: true });
  return new Promise((resolve, reject) => {
    connection.socket.once('error', reject);
    connection.socket.once(tls ? 'secureConnect' : 'connect', () => resolve(connection));
  });
}

/**
 * A client with one kept-alive connection per origin (one request at a time): `get(href, onBody)` resolves to
 * the final status once the body has gone to `onBody`, redirects followed (`onHead`, if given, is handed the
 * final answer's head as text before its body); `close()` ends its connections.
 */
export function rawClient() {
  const kept = new Map();
  return {
    async get(href, onBody, onHead) {
      let url = new URL(href);
      for (;;) {
        const connection = kept.get(url.origin) ?? (await open(url));
        kept.set(url.origin, connection);
        const answer = await exchange(connection, url, onBody, onHead);
        if (answer.status >= 300 && answer.status < 400 && answer.location) {
          url = new URL(answer.location, url);
          continue;
        }
        return answer.status;
      }
    },
    close() {
      for (const connection of kept.values()) connection.socket.destroy();
      kept.clear();
    },
  };
}

function exchange(connection, url, onBody, onHead) {
  const { buffer, socket } = connection;
  return new Promise((resolve, reject) => {
    let left = -1;
    let answer;
    connection.fill = 0;
    socket.once('error', reject);
    const done = () => {
      socket.off('error', reject);
      resolve(answer);
    };
    connection.handler = (n) => {
      if (left >= 0) {
        const take = Math.min(n, left);
        if (answer.status === 200 || answer.status === 206) onBody(buffer.subarray(0, take));
        left -= take;
        if (left === 0) done();
        return;
      }
      connection.fill += n;
      const end = buffer.subarray(0, connection.fill).indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = buffer.toString('latin1', 0, end);
      const status = Number(head.slice(9, 12));
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      answer = { status, location: /\r\nlocation: *([^\r]+)/i.exec(head)?.[1] };
      if (status === 200 || status === 206) onHead?.(head);
      const rest = buffer.subarray(end + 4, connection.fill);
      connection.fill = 0;
      left = length;
      const take = Math.min(rest.length, left);
      if (take > 0 && (status === 200 || status === 206)) onBody(rest.subarray(0, take));
      left -= take;
      if (left === 0) done();
    };
    socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n\r\n`, 'latin1');
  });
}
