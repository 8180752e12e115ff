import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver accepted, with its signature verified by the library's own verifier. */
export interface ReceivedWebhook {
  id: string;
  body: { type: string; timestamp: string; data: Record<string, unknown> };
  raw: string;
  headers: IncomingHttpHeaders;
}

/** A real HTTP server on 127.0.0.1 receiving Standard Webhooks deliveries. */
export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hook`. */
  url: string;
  port: number;
  /** Deliveries whose signature verified with one of `secrets`. */
  received: ReceivedWebhook[];
  /** Requests whose signature did not verify (should stay empty). */
  rejected: string[];
  /** Secrets `whsec_…` accepted; set after creating the endpoint. */
  secrets: string[];
  /** Status answered to verified deliveries (default 204). */
  status: number;
  /** Stops listening (connections refused) until {@link start}. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** Resolves once `count` deliveries matching `predicate` arrived; rejects after `timeoutMs`. */
  waitFor(count: number, predicate?: (w: ReceivedWebhook) => boolean, timeoutMs?: number): Promise<ReceivedWebhook[]>;
}

/** Starts a receiver on a free port (or `port`). */
export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const receiver: WebhookReceiver = {
    url: '',
    port,
    received: [],
    rejected: [],
    secrets: [],
    status: 204,
    async start() {
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
          const verified = receiver.secrets.some((secret) => {
            try {
              new Webhook(secret).verify(raw, headers);
              return true;
            } catch {
              return false;
            }
          });
          if (!verified) {
            receiver.rejected.push(raw);
            res.writeHead(400).end();
            return;
          }
          if (receiver.status >= 200 && receiver.status < 300) {
            receiver.received.push({ id: String(req.headers['webhook-id']), body: JSON.parse(raw) as ReceivedWebhook['body'], raw, headers: req.headers });
          }
          res.writeHead(receiver.status).end();
        });
      });
      server.on('connection', (s: Socket) => {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
      });
      await new Promise<void>((resolve) => server!.listen(receiver.port, '127.0.0.1', () => resolve()));
      receiver.port = (server.address() as AddressInfo).port;
      receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
    },
    async stop() {
      const closing = server;
      server = undefined;
      if (!closing) return;
      sockets.forEach((s) => s.destroy());
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
    async waitFor(count, predicate = () => true, timeoutMs = 30_000) {
      const started = Date.now();
      for (;;) {
        const found = receiver.received.filter(predicate);
        if (found.length >= count) return found;
        if (Date.now() - started > timeoutMs) throw new Error(`only ${found.length} of ${count} webhooks arrived within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
  };
  await receiver.start();
  return receiver;
}
