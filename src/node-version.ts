/**
 * The oldest Node.js the service runs on (package.json `engines`; README "Quick start"). Older
 * releases lack what the service and its dependencies use (Node 20 crashes in argon2's binding with
 * a segmentation fault), so an entry point refuses them with a sentence instead of a crash.
 */
export const MINIMUM_NODE_VERSION = '22.12.0';

/**
 * Tells whether a Node.js version is older than {@link MINIMUM_NODE_VERSION}, and what to say then.
 * @param version `process.versions.node`, e.g. `20.20.2` (a leading `v` is accepted).
 * @returns the one-line refusal for standard error, or undefined when the version is supported.
 */
export function unsupportedNodeMessage(version: string): string | undefined {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map((part) => Number.parseInt(part, 10) || 0);
  const [minMajor = 0, minMinor = 0] = MINIMUM_NODE_VERSION.split('.').map(Number);
  if (major > minMajor || (major === minMajor && minor >= minMinor)) return undefined;
  return `tenant-identity needs Node.js ${MINIMUM_NODE_VERSION} or newer; this is ${version}. ` +
    'Start it with `npm start`, which runs on the Node.js 22 that `npm install` brings (README "Quick start"), or install Node.js 22 LTS.';
}

// Imported first by each entry point (src/main.ts): modules are evaluated in import order, so this
// runs before any module that would crash on an older Node.
const refusal = unsupportedNodeMessage(process.versions.node);
if (refusal !== undefined) {
  process.stderr.write(`${refusal}\n`);
  process.exit(1);
}
