import { REQUEST_ERRORS, type ApiError } from './errors.js';

/** Seconds a client is told to wait (`Retry-After`) when a dependency is down or restarting. */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** `details.reason` of every 503 `SERVICE_UNAVAILABLE` (docs/api-rules.md "Errors"). */
export const SERVICE_UNAVAILABLE_REASON = REQUEST_ERRORS.serviceUnavailable.reason;

/**
 * Socket-level error codes of Node.js that mean the peer (PostgreSQL or Redis) is unreachable or
 * dropped the connection.
 */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

/**
 * PostgreSQL SQLSTATEs of a server that is shutting down, restarting or refusing connections
 * (PostgreSQL documentation, appendix A "Error Codes": class 08 connection exception, 57P01
 * admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 53300 too_many_connections).
 */
const SQLSTATES = new Set(['08000', '08001', '08003', '08004', '08006', '08P01', '57P01', '57P02', '57P03', '53300']);

/**
 * Messages of the drivers (node-postgres, knex's pool, ioredis) that carry no code but mean the same:
 * a connection ended under a query, a transaction whose connection was lost, or no connection to be had.
 */
const MESSAGES = [
  /Connection terminated/i,
  /Connection ended unexpectedly/i,
  /Client has encountered a connection error/i,
  /terminating connection due to administrator command/i,
  /the database system is (starting up|shutting down|in recovery mode|not yet accepting connections)/i,
  /Transaction query already complete/i,
  /Knex: Timeout acquiring a connection/i,
  /Unable to acquire a connection/i,
  /Connection is closed/i,
  /Stream isn't writeable/i,
  /Reached the max retries per request limit/i,
];

/** Kinds of outage, by how a request that met one may be retried. */
export type OutageKind = 'dropped' | 'unreachable';

/**
 * Classifies `err` (and its `cause` chain, as tRPC and MikroORM wrap driver errors) as a dependency
 * outage: `dropped` when an open connection was lost under a query (the request may have been cut
 * short anywhere), `unreachable` when no connection could be had (nothing reached the server).
 * @returns undefined for every other error, including every answer PostgreSQL gave on a live connection.
 */
export function outageKind(err: unknown): OutageKind | undefined {
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (typeof current === 'object' && current !== null && !seen.has(current)) {
    seen.add(current);
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (code === 'ECONNREFUSED' || code === '57P03' || code === '53300' || code === '08001' || code === '08004') return 'unreachable';
      if (SOCKET_CODES.has(code) || SQLSTATES.has(code)) return 'dropped';
    }
    if (typeof message === 'string') {
      if (/Timeout acquiring a connection|Unable to acquire a connection|ECONNREFUSED|starting up/i.test(message)) return 'unreachable';
      if (MESSAGES.some((m) => m.test(message))) return 'dropped';
    }
    current = (current as { cause?: unknown }).cause ?? (current as { previous?: unknown }).previous;
  }
  return undefined;
}

/** True when `err` means PostgreSQL or Redis is down, restarting or dropped the connection ({@link outageKind}). */
export function isDependencyOutage(err: unknown): boolean {
  return outageKind(err) !== undefined;
}

/**
 * 503 `SERVICE_UNAVAILABLE` with `details.reason` `service_unavailable` (docs/api-rules.md "Errors");
 * the caller also sets `Retry-After` ({@link SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS}).
 */
export const serviceUnavailable = (): ApiError =>
  REQUEST_ERRORS.serviceUnavailable();
