/**
 * `npx tsx bench/gc-count.ts [MAX_HEAP_MB] [node options…]`: how often V8 collects under one heap
 * setting, counted per 10,000 `GET me` requests (docs/performance.md "The heap setting"). Counts do not
 * depend on what else the machine runs, unlike CPU time. Starts the built service (`npm run build`)
 * with `--trace-gc` and the given Node options on its own database, signs in 48 seeded users, warms up
 * for 5 s (bench/me-load.ts), then sends exactly 30,000 `me` requests on 32 connections and prints one
 * JSON line: the scavenges and mark-compacts per 10,000 requests, the service CPU per request and its
 * peak RSS.
 *
 * Examples: `npx tsx bench/gc-count.ts 128` (the default limit), `npx tsx bench/gc-count.ts 0
 * --max-old-space-size=128 --max-semi-space-size=16` (other V8 settings, no `MAX_HEAP_MB`).
 */
import { withMeLoad } from './me-load.js';
import { ProcessMonitor } from './service.js';

const REQUESTS = 30_000;

async function main(): Promise<void> {
  const [maxHeapMb = '128', ...nodeOptions] = process.argv.slice(2);
  await withMeLoad(maxHeapMb, ['--trace-gc', ...nodeOptions], async ({ child, output, load }) => {
    const monitor = new ProcessMonitor(child.pid!);
    monitor.start();
    const startedAt = Date.now();
    const result = await load({ amount: REQUESTS });
    const used = monitor.takeWindow();
    monitor.stop();
    await new Promise((r) => setTimeout(r, 300));
    const during = output.filter((t) => t.at >= startedAt).map((t) => t.line);
    const per10k = (pattern: RegExp) => (during.filter((l) => pattern.test(l)).length * 10_000) / result.ok;
    console.log(JSON.stringify({
      maxHeapMb: Number(maxHeapMb),
      nodeOptions,
      requests: result.ok,
      errors: result.errors,
      scavengesPer10k: per10k(/Scavenge/),
      markCompactsPer10k: per10k(/Mark-Compact|Mark-Sweep/),
      cpuMsPerRequest: (used.cpuSeconds * 1000) / result.ok,
      peakRssMb: Math.round(used.peakRssBytes / 1024 / 1024),
    }));
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
