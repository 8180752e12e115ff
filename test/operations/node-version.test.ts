import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { MINIMUM_NODE_VERSION, unsupportedNodeMessage } from '../../src/node-version.js';

// The Node.js an operator starts the service with is a start-up decision with no HTTP meaning.
describe('the Node.js version the service refuses', () => {
  it('accepts 22.12 and newer, refuses anything older with what to do instead', () => {
    expect(MINIMUM_NODE_VERSION).toBe('22.12.0');
    for (const supported of ['22.12.0', '22.23.1', 'v22.12.0', '23.0.0', '24.11.1', '30.1.0']) {
      expect(unsupportedNodeMessage(supported), supported).toBeUndefined();
    }
    for (const old of ['22.11.0', '22.0.0', '21.7.3', '20.20.2', 'v20.20.2', '18.20.4']) {
      expect(unsupportedNodeMessage(old), old).toMatch(/needs Node\.js 22\.12\.0 or newer; this is v?\d+\.\d+\.\d+\. Start it with `npm start`/);
    }
    expect(unsupportedNodeMessage(process.versions.node)).toBeUndefined();
  });

  // The machines this runs on have Node 20 as the system's `node` (README "Quick start"): started
  // with it, the service says why and exits 1 instead of crashing in a native module.
  const systemNode = '/usr/bin/node';
  const systemVersion = existsSync(systemNode) ? spawnSync(systemNode, ['--version'], { encoding: 'utf8' }).stdout.trim() : '';
  it.skipIf(systemVersion === '' || unsupportedNodeMessage(systemVersion) === undefined)(
    `an older system Node (${systemVersion || 'none'}) starting the service gets a sentence and exit code 1`,
    () => {
      const root = path.resolve(import.meta.dirname, '../..');
      const run = spawnSync(systemNode, ['--import', 'tsx', 'src/main.ts'], {
        cwd: root, encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH, HOME: process.env.HOME },
      });
      expect(run.stderr).toContain(`tenant-identity needs Node.js 22.12.0 or newer; this is ${systemVersion.replace(/^v/, '')}.`);
      expect(run.status).toBe(1);
      expect(run.signal).toBeNull();
    },
  );
});
