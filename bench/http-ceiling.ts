/**
 * Child process of `npm run bench`: the fastest possible JSON answer, a bare `node:http` server run
 * with as many cluster workers as the service under test. `PORT` and `PROCESSES` from the environment.
 */
import cluster from 'node:cluster';
import { createServer } from 'node:http';

const port = Number(process.env.PORT);
const processes = Number(process.env.PROCESSES ?? 1);

if (cluster.isPrimary && processes > 1) {
  for (let i = 0; i < processes; i++) cluster.fork();
  process.once('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    process.exit(0);
  });
} else {
  const body = JSON.stringify({ status: 'ok', service: 'bare-node-http' });
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  server.keepAliveTimeout = 65_000;
  server.listen(port, '127.0.0.1');
  process.once('SIGTERM', () => process.exit(0));
}
