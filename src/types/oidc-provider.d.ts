/** The part of oidc-provider 9 (untyped JavaScript) this service and its tests use. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface ClientAdapter {
    upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void>;
  }

  /** What `interactionDetails` answers about a pending sign-in (oidc-provider's Interaction model). */
  export interface InteractionDetails {
    uid: string;
    /** Seconds since the epoch when the interaction was created. */
    iat?: number;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown> & { client_id?: string; max_age?: number; prompt?: string };
    session?: { accountId?: string; uid?: string };
  }

  /** The part of oidc-provider's request context the service's hooks read. */
  export interface KoaContextWithOIDC {
    oidc: {
      session?: { accountId?: string };
      client?: { clientId: string; grantTypeAllowed(grantType: string): boolean };
      params?: Record<string, unknown>;
      entities: Record<string, unknown>;
      [key: string]: unknown;
    };
    /** Koa's request method, query, and header reader. */
    method: string;
    query: Record<string, string | string[] | undefined>;
    get(header: string): string;
    /** Koa's response header writer and reader. */
    set(header: string, value: string): void;
    response: { get(header: string): string };
    type: string;
    body: unknown;
    [key: string]: unknown;
  }

  /** OAuth 2.0 errors the provider's hooks may throw (RFC 6749 §5.2, RFC 8707 §2). */
  export const errors: {
    InvalidTarget: new (description?: string) => Error;
    InvalidRequest: new (description?: string) => Error;
  };

  /** A grant as the provider's hooks handle it. */
  export interface GrantInstance {
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  export class Provider {
    constructor(issuer: string, configuration?: Record<string, unknown>);
    readonly issuer: string;
    proxy: boolean;
    static readonly Client: unknown;
    readonly Client: {
      readonly adapter: ClientAdapter;
      /** The client metadata validator; `invalidate(message, code)` refuses a client. */
      readonly Schema: { prototype: { invalidate(message: string, code?: string): void } };
    };
    readonly Grant: (new (properties: { accountId: string; clientId: string }) => GrantInstance) & {
      find(id: string): Promise<GrantInstance | undefined>;
    };
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    /** Adds a Koa middleware before the provider's routes. */
    use(middleware: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>): void;
    on(event: string, listener: (...args: never[]) => void): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: Record<string, unknown>,
    ): Promise<string>;
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
