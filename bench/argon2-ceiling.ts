/**
 * Child process of `npm run bench`: argon2id hashes per second at the service's parameters
 * (src/security/passwords.ts ARGON2_OPTIONS) with one hash in flight per core, on libuv's pool sized
 * to the cores. Prints `{"hashesPerSecond", "hashes", "seconds", "concurrency"}` on stdout.
 */
import argon2 from 'argon2';
import { availableParallelism } from 'node:os';
import { ARGON2_OPTIONS } from '../src/security/passwords.js';

const seconds = Number(process.argv[2] ?? 5);
const concurrency = Number(process.argv[3] ?? availableParallelism());

async function lane(deadline: number, counter: { n: number }): Promise<void> {
  while (Date.now() < deadline) {
    await argon2.hash('correct horse battery staple', ARGON2_OPTIONS);
    counter.n++;
  }
}

// Warm-up so the first allocations are not measured.
await Promise.all(Array.from({ length: concurrency }, () => argon2.hash('warm-up', ARGON2_OPTIONS)));
const counter = { n: 0 };
const started = process.hrtime.bigint();
const deadline = Date.now() + seconds * 1000;
await Promise.all(Array.from({ length: concurrency }, () => lane(deadline, counter)));
const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(JSON.stringify({ hashesPerSecond: counter.n / elapsed, hashes: counter.n, seconds: elapsed, concurrency }) + '\n');
