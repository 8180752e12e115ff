import { createServer } from 'node:net';

/**
 * Polls `probe` every 25 ms until it returns a value, and returns it. No timing assertion: the
 * bound (`timeoutMs`, milliseconds) only ends a hung test.
 * @throws Error `gave up waiting for <what>` after `timeoutMs`.
 */
export async function eventually<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A loopback port nothing listens on (bound, then released): e.g. an SMTP server that is down. */
export async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
