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
    // one bundle of ~660 kB (~200 kB gzipped): React, TanStack Router/Query, the tRPC client, qrcode
    chunkSizeWarningLimit: 800,
  },
});
