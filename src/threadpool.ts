import { availableParallelism } from 'node:os';

/**
 * The libuv thread pool size `npm start` uses when `UV_THREADPOOL_SIZE` is not set: the cores per
 * service process (`WEB_CONCURRENCY`), at least 2. argon2id hashes run on this pool, each with
 * 19 MiB of memory; more hashing threads than cores only thrash caches and add resident memory
 * (docs/performance.md measured about 10% more CPU per login and 35 MB more RSS with libuv's
 * default of 4 threads on 2 cores).
 * @returns undefined when the variable is already set (it is then left alone).
 */
export function defaultThreadpoolSize(env: NodeJS.ProcessEnv, cores: number): number | undefined {
  if (env.UV_THREADPOOL_SIZE) return undefined;
  const processes = Math.max(1, Math.floor(Number(env.WEB_CONCURRENCY) || 1));
  return Math.max(2, Math.floor(cores / processes));
}

// Imported first by src/main.ts: libuv reads the variable when the pool is first used, which is
// after module loading, so setting it here takes effect (and cluster workers inherit it).
const size = defaultThreadpoolSize(process.env, availableParallelism());
if (size !== undefined) process.env.UV_THREADPOOL_SIZE = String(size);
