/** Short plain-text answers of the object routes: the message and a newline, with its length. */
import type { ServerResponse } from 'node:http';

/** The body and headers of a plain-text answer. */
export function plainText(message: string): { body: Buffer; headers: Record<string, string> } {
  const body = Buffer.from(`${message}\n`, 'utf8');
  return {
    body,
    headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(body.length) },
  };
}

/** Answers with `status` and a plain-text `message` (`headers` added to its own). */
export function sendText(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const answer = plainText(message);
  res.writeHead(status, { ...answer.headers, ...headers });
  res.end(answer.body);
}
