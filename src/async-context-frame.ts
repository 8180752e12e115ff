import { nodeOptionGiven } from './heap-limit.js';

/** The Node option that keeps AsyncLocalStorage's stores in a frame that follows promises. */
const FLAG = '--experimental-async-context-frame';

/**
 * `--experimental-async-context-frame` where this Node has that option (22.7 to 23; Node 24 uses the
 * frame by default and refuses the option), unless the operator already chose either way
 * (`--[no-]…async-context-frame` in `execArgv` or `NODE_OPTIONS`). Without the frame, Node 22 keeps
 * AsyncLocalStorage's stores with a promise hook that runs on every promise once any store has been
 * entered (MikroORM's transactions enter one), about 12 KB and 4 to 9% of the CPU of `GET me` and
 * `auth/refresh` (docs/performance.md "AsyncLocalStorage on Node 22").
 * @param execArgv `process.execArgv`; @param nodeOptions `process.env.NODE_OPTIONS`.
 * @param available whether Node accepts the option (`process.allowedNodeEnvironmentFlags`).
 * @returns the option to start the service with, or none.
 */
export function asyncContextFrameArgs(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
  available: boolean = process.allowedNodeEnvironmentFlags.has(FLAG),
): string[] {
  if (!available) return [];
  return nodeOptionGiven(/async[-_]context[-_]frame/, execArgv, nodeOptions) ? [] : [FLAG];
}
