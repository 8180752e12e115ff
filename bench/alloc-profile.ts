/**
 * `npx tsx bench/alloc-profile.ts [--promoted] [MAX_HEAP_MB] [node options…]`: what one `GET me`
 * allocates, by package and by function, in kilobytes per request (docs/performance.md "The request
 * path, second pass"). Starts the built service (`npm run build`) under `me` load (bench/me-load.ts)
 * with the inspector on a free local port, and samples its allocations with V8's sampling heap
 * profiler (`HeapProfiler.startSampling`, one sample per 2 KiB) over exactly 10,000 requests. By
 * default every allocation counts, including what the next scavenge frees; with `--promoted` only what
 * outlived the young generation (collected by a full collection or still alive): what fills the old
 * generation. Allocation sampling is statistical: read the figures to a few tenths of a kilobyte.
 */
import { withMeLoad } from './me-load.js';
import { freePort } from './service.js';

const REQUESTS = 10_000;
const SAMPLING_INTERVAL_BYTES = 2048;

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: ProfileNode[];
}
interface SamplingHeapProfile {
  head: ProfileNode;
  samples: { size: number; nodeId: number }[];
}

/** A minimal Chrome DevTools Protocol client over Node's global WebSocket. */
async function inspectorSession(port: number): Promise<{ send(method: string, params?: object): Promise<unknown>; close(): void }> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let lastId = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result);
  });
  return {
    send: (method, params = {}) =>
      new Promise((resolve) => {
        lastId += 1;
        waiting.set(lastId, resolve);
        socket.send(JSON.stringify({ id: lastId, method, params }));
      }),
    close: () => socket.close(),
  };
}

/** `node_modules/<package>`, `src/<file>` of the service, `node:<module>`, or the frame's URL. */
function placeOf(url: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.includes('/dist/src/')) return `src/${url.split('/dist/src/')[1]!.replace(/\.js$/, '.ts')}`;
  return url || '(V8)';
}

function report(profile: SamplingHeapProfile, requests: number): void {
  const frames = new Map<number, CallFrame>();
  const stack = [profile.head];
  while (stack.length) {
    const node = stack.pop()!;
    frames.set(node.id, node.callFrame);
    stack.push(...(node.children ?? []));
  }
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const sample of profile.samples) {
    const frame = frames.get(sample.nodeId);
    if (!frame) continue;
    total += sample.size;
    const place = placeOf(frame.url);
    byPlace.set(place, (byPlace.get(place) ?? 0) + sample.size);
    const fn = `${frame.functionName || '(anonymous)'} ${place}:${frame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + sample.size);
  }
  const kb = (bytes: number) => (bytes / requests / 1024).toFixed(1).padStart(6);
  console.log(`${kb(total)} KB per request in all`);
  const top = (map: Map<string, number>, n: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log('\nby package or file:');
  for (const [place, bytes] of top(byPlace, 25)) console.log(`${kb(bytes)} KB  ${place}`);
  console.log('\nby function (the frame that allocated):');
  for (const [fn, bytes] of top(byFunction, 30)) console.log(`${kb(bytes)} KB  ${fn}`);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const promotedOnly = args[0] === '--promoted';
  const [maxHeapMb = '128', ...nodeOptions] = promotedOnly ? args.slice(1) : args;
  const port = await freePort();
  await withMeLoad(maxHeapMb, [`--inspect=127.0.0.1:${port}`, ...nodeOptions], async ({ load }) => {
    const inspector = await inspectorSession(port);
    try {
      await inspector.send('HeapProfiler.enable');
      await inspector.send('HeapProfiler.startSampling', {
        samplingInterval: SAMPLING_INTERVAL_BYTES,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: !promotedOnly,
      });
      const result = await load({ amount: REQUESTS });
      const { profile } = (await inspector.send('HeapProfiler.stopSampling')) as { profile: SamplingHeapProfile };
      console.log(`${result.ok} requests answered 2xx, ${result.errors} errors; ${promotedOnly ? 'allocations that outlived the young generation' : 'every allocation'}:`);
      report(profile, result.ok);
    } finally {
      inspector.close();
    }
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
