// `npm start` runs this first: it builds the server and the web pages (`npm run build`) only when a
// source is newer than the last build, so a second start begins serving at once. Sources: src/,
// scripts/, web/, the tsconfig files, mikro-orm.config.ts and package-lock.json. The stamp is
// dist/.build-stamp.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist', '.build-stamp');
const sources = ['src', 'scripts', 'web', 'tsconfig.json', 'tsconfig.build.json', 'mikro-orm.config.ts', 'package-lock.json'];

/** Newest modification time (ms) of a file or of every file below a directory. */
function newest(entry) {
  if (!existsSync(entry)) return 0;
  const stats = statSync(entry);
  if (!stats.isDirectory()) return stats.mtimeMs;
  return readdirSync(entry).reduce((max, name) => Math.max(max, newest(path.join(entry, name))), stats.mtimeMs);
}

const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const changed = Math.max(...sources.map((s) => newest(path.join(root, s))));
if (changed > built) {
  process.stdout.write('Building the server and the web pages (sources changed since the last build)…\n');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
}
