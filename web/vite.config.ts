import path from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const webDir = path.dirname(fileURLToPath(import.meta.url));

/** Builds the hosted pages into dist/web (served by src/rest/web-pages.ts); hashed files under /assets. */
export default defineConfig({
  root: webDir,
  base: '/',
  plugins: [react()],
  build: {
    outDir: path.resolve(webDir, '../dist/web'),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    // the first load is ~740 kB (~230 kB gzipped): React, TanStack Router/Query, the tRPC client, the
    // hosted pages and the console's layout; console pages load on first visit (web/src/router.tsx),
    // the largest the activity charts (~460 kB). Vite's default warning limit is 500 kB.
    chunkSizeWarningLimit: 500,
  },
});
