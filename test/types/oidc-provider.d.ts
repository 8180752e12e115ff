/** The part of oidc-provider 9 (untyped JavaScript) the tests use. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface ClientAdapter {
    upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void>;
  }

  export class Provider {
    constructor(issuer: string, configuration?: Record<string, unknown>);
    readonly issuer: string;
    static readonly Client: unknown;
    readonly Client: { readonly adapter: ClientAdapter };
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
    /** Ends a user interaction with its result (`{ login: { accountId, amr? } }`, `{ consent }`, …). */
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: Record<string, unknown>,
    ): Promise<void>;
  }

  export default Provider;
}
