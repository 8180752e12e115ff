import net from 'node:net';

/**
 * A TCP forwarder on a loopback port in front of a real server (PostgreSQL, Redis), for outage
 * tests: it can refuse new connections, drop every open one, or cut the next connection that sends
 * a message (a query lost on the wire, as a server restart does to a busy connection).
 */
export interface TcpProxy {
  port: number;
  /** Drops every open connection and refuses new ones (ECONNREFUSED) until {@link up}. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** The next `count` messages a client sends on an open connection are not forwarded: that connection is destroyed instead. */
  cutNext(count?: number): void;
  close(): Promise<void>;
}

/** Starts a forwarder from a free loopback port to `target`. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let cuts = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    let started = false;
    client.on('data', (chunk) => {
      if (started && cuts > 0) {
        cuts -= 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      started = true;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  let listening = true;
  const proxy: TcpProxy = {
    port,
    async down() {
      for (const s of sockets) s.destroy();
      sockets.clear();
      if (listening) await new Promise<void>((resolve) => server.close(() => resolve()));
      listening = false;
    },
    async up() {
      if (listening) return;
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      listening = true;
    },
    cutNext(count = 1) {
      cuts = count;
    },
    async close() {
      await proxy.down();
    },
  };
  return proxy;
}
