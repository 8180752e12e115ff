import { describe, expect, it } from 'vitest';
import { heapLimitArgs, heapLimits } from '../../src/heap-limit.js';
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

  it('refuses a MAX_HEAP_MB too small to run the service', () => {
    expect(() => loadConfig({ DATA_DIR: mkdtempSync(path.join(tmpdir(), 'heap-')), MAX_HEAP_MB: '12' })).toThrow(/MAX_HEAP_MB/);
  });
});
