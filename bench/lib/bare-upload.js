/**
 * The floor of a Node upload on this machine, for scale in case 3 (`--no-checksum`): `node
 * bench/lib/bare-upload.js SIGNED_URL FILE` PUTs FILE to a pre-signed URL over a raw socket, the head then the
 * file read 64 KiB at a time with `readSync` into two buffers that take turns, each written as soon as the
 * socket took the one before; it exits 0 once the server answered 200. It does nothing else mission-data does: no
 * start-up of a command line, no `/upload` request (the URL is fetched beforehand, as curl's is), no name checks,
 * no look at the stored object.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { connect } from 'node:net';

const CHUNK_BYTES = 64 * 1024;
const [signed, file] = process.argv.slice(2);
const url = new URL(signed);
if (url.protocol !== 'http:') throw new Error(`bare-upload: ${url.protocol} is not supported`);
const fd = openSync(file, 'r');
const size = fstatSync(fd).size;
const buffers = [Buffer.allocUnsafeSlow(CHUNK_BYTES), Buffer.allocUnsafeSlow(CHUNK_BYTES)];

const status = await new Promise((resolve, reject) => {
  const socket = connect({ host: url.hostname, port: Number(url.port), noDelay: true });
  let answer = '';
  socket.on('error', reject);
  socket.on('data', (data) => {
    answer += data.toString('latin1');
    const line = /^HTTP\/1\.[01] (\d{3})/.exec(answer);
    if (line && answer.includes('\r\n\r\n')) {
      socket.destroy();
      resolve(Number(line[1]));
    }
  });
  socket.on('close', () => reject(new Error(`PUT ${url.origin}${url.pathname}: no answer`)));
  socket.on('connect', () => {
    socket.write(
      `PUT ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-length: ${size}\r\n\r\n`,
    );
    let position = 0;
    let turn = 0;
    const send = () => {
      while (position < size) {
        const buffer = buffers[turn];
        turn = 1 - turn;
        const read = readSync(fd, buffer, 0, Math.min(CHUNK_BYTES, size - position), position);
        if (read === 0) throw new Error(`${file} ended before its size`);
        position += read;
        if (!socket.write(read === CHUNK_BYTES ? buffer : buffer.subarray(0, read))) {
          socket.once('drain', send);
          return;
        }
      }
    };
    send();
  });
});
closeSync(fd);
if (status !== 200) throw new Error(`PUT ${url.origin}${url.pathname}: status ${status}`);
