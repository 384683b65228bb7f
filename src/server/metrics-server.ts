/** `/metrics` on a port of its own, when the operator keeps it off the API's public port. */
import { createServer, type Server } from 'node:http';
import { ServerMetrics } from './metrics.js';
import { answerMetrics } from './request-handler.js';

export { ServerMetrics };

/** A plain HTTP server answering `/metrics` (behind `token` when given) and 404 to anything else. */
export function metricsServer(metrics: ServerMetrics, token: string | undefined): Server {
  const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      answerMetrics(req, res, metrics, token).catch(() => res.destroy());
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('This port answers /metrics only.\n');
  });
  return server;
}
