import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { AppServices } from '../app-services.js';
import type { Config } from '../config.js';

/**
 * Serves `GET /metrics` (Prometheus text format) on its own listener at `METRICS_HOST:METRICS_PORT`
 * (`METRICS_HOST` defaults to `HOST`), apart from the API port, so the balancer never exposes it; closed at shutdown (a disposer). Used by
 * `npm start` and `npm run worker`.
 * @returns the URL of the metrics endpoint.
 */
export async function serveMetrics(services: AppServices, config: Config, logger: Logger): Promise<string> {
  const metrics = services.metrics!;
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    metrics.exposition().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(body),
      (err: unknown) => {
        logger.warn({ err }, 'metrics collection failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.metricsPort, config.metricsHost, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ port }, 'metrics listening');
  services.disposers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const host = config.metricsHost === '0.0.0.0' || config.metricsHost === '::' ? '127.0.0.1' : config.metricsHost;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics`;
}
