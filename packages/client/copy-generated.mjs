// Copies the files tsc does not emit (the router declaration and the OpenAPI document) into dist/.
import { copyFileSync, mkdirSync } from 'node:fs';

mkdirSync('dist/generated', { recursive: true });
for (const file of ['app-router.d.ts', 'openapi.json']) copyFileSync(`src/generated/${file}`, `dist/generated/${file}`);
