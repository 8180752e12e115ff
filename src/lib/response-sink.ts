import { once } from 'node:events';
import type { Response } from 'express';

/**
 * A writer onto an HTTP response that honours backpressure: each `write` resolves once the socket
 * has taken the chunk (or its buffer has room again), so a large export never piles up in memory.
 * @throws Error `client_closed` from `write` when the client went away; the caller stops reading rows.
 */
export function responseSink(res: Response): { write(chunk: string): Promise<void> } {
  return {
    async write(chunk: string): Promise<void> {
      if (res.destroyed || res.writableEnded) throw new Error('client_closed');
      if (res.write(chunk)) return;
      const closed = once(res, 'close').then(() => {
        throw new Error('client_closed');
      });
      await Promise.race([once(res, 'drain'), closed]);
    },
  };
}
