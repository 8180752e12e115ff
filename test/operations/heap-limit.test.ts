import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { heapLimitArgs, heapLimits } from '../../src/heap-limit.js';
import { asyncContextFrameArgs } from '../../src/async-context-frame.js';
import { loadConfig } from '../../src/config.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// Which heap limit the service sets for itself is a start-up decision with no HTTP meaning.
describe('the heap limit the service sets for itself', () => {
  it('caps the old generation at MAX_HEAP_MB (128 MiB by default) with a 24 MiB young generation', () => {
    const config = loadConfig({ DATA_DIR: mkdtempSync(path.join(tmpdir(), 'heap-')) });
    expect(config.maxHeapMb).toBe(128);
    expect(heapLimits(config.maxHeapMb, [], undefined)).toEqual({ maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 24 });
    expect(heapLimits(300, [], '')).toEqual({ maxOldGenerationSizeMb: 300, maxYoungGenerationSizeMb: 24 });
  });

  it('leaves the heap to Node when a size was given to Node itself or MAX_HEAP_MB is 0', () => {
    expect(heapLimits(128, ['--max-old-space-size=512'], undefined)).toBeUndefined();
    expect(heapLimits(128, [], '--enable-source-maps --max_old_space_size=512')).toBeUndefined();
    expect(heapLimits(0, [], undefined)).toBeUndefined();
  });

  it('gives cluster workers the same limits as Node options', () => {
    expect(heapLimitArgs(heapLimits(128, [], undefined))).toEqual(['--max-old-space-size=128', '--max-semi-space-size=8']);
    expect(heapLimitArgs(undefined)).toEqual([]);
  });

  it('asks for AsyncLocalStorage\'s context frame only where Node has the option and nobody chose either way', () => {
    expect(asyncContextFrameArgs([], undefined, true)).toEqual(['--experimental-async-context-frame']);
    expect(asyncContextFrameArgs([], '', true)).toEqual(['--experimental-async-context-frame']);
    // Node 24 uses the frame by default and refuses the option
    expect(asyncContextFrameArgs([], undefined, false)).toEqual([]);
    expect(asyncContextFrameArgs(['--experimental-async-context-frame'], undefined, true)).toEqual([]);
    expect(asyncContextFrameArgs([], '--enable-source-maps --no-experimental-async-context-frame', true)).toEqual([]);
    // what this Node says of itself: accepted on 22, refused on 24
    const major = Number(process.versions.node.split('.')[0]);
    expect(asyncContextFrameArgs([], undefined)).toEqual(major === 22 ? ['--experimental-async-context-frame'] : []);
  });

  it('replaces the process with the same program under the limit as Node options: same process, main thread, arguments kept', () => {
    const fixture = path.join(import.meta.dirname, 'fixtures', 'restart-with-node-options.ts');
    const child = spawnSync(process.execPath, ['--import', 'tsx', fixture, '--some-argument'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
    expect(child.status).toBe(0);
    const after = JSON.parse(child.stdout) as { pid: number; execArgv: string[]; heapSizeLimitMb: number; args: string[] };
    expect(after.pid).toBe(child.pid);
    expect(after.execArgv).toEqual(expect.arrayContaining(['--max-old-space-size=96', '--max-semi-space-size=8', '--import', 'tsx']));
    // on Node 22 the context frame too (Node 24 has it by default)
    expect(after.execArgv.includes('--experimental-async-context-frame')).toBe(process.allowedNodeEnvironmentFlags.has('--experimental-async-context-frame'));
    expect(after.args).toEqual(['--some-argument']);
    // V8's limit is the old generation plus the young one (three 8 MiB semi-spaces): far below Node's own default of gigabytes
    expect(after.heapSizeLimitMb).toBeGreaterThanOrEqual(96);
    expect(after.heapSizeLimitMb).toBeLessThan(160);
  });

  it('refuses a MAX_HEAP_MB too small to run the service', () => {
    expect(() => loadConfig({ DATA_DIR: mkdtempSync(path.join(tmpdir(), 'heap-')), MAX_HEAP_MB: '12' })).toThrow(/MAX_HEAP_MB/);
  });
});
