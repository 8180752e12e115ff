import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', '**/dist/', 'packages/client/src/generated/', 'node_modules/', 'data/', 'coverage/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } } },
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', fetch: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', Headers: 'readonly', Response: 'readonly', AbortController: 'readonly', NodeJS: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always'],
      'no-console': 'error',
    },
  },
  {
    // docs/architecture.md "Rules", data access: SQL and ORM calls live only in the query module of
    // their table (`src/queries/<table>.ts`), in `src/db/` (the ORM, the pooled query) and in the
    // migrations; every other file calls a query function.
    files: ['src/**/*.ts'],
    ignores: ['src/queries/**', 'src/db/**', 'src/migrations/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.property.name='execute']", message: 'Plain SQL belongs in the query module of its table (src/queries/<table>.ts): call a function of it.' },
        {
          selector: "CallExpression[callee.object.name='em'][callee.property.name=/^(find|findOne|findOneOrFail|findAll|findAndCount|findByCursor|count|persist|persistAndFlush|flush|create|nativeUpdate|nativeDelete|insert|insertMany|upsert|upsertMany|remove|removeAndFlush|getReference|assign|merge|lock|refresh|populate|createQueryBuilder|qb|getKnex|getConnection)$/]",
          message: 'ORM calls belong in the query module of their table (src/queries/<table>.ts): call a function of it.',
        },
        {
          selector: "CallExpression[callee.property.name=/^(find|findOne|findOneOrFail|findAndCount|nativeUpdate|nativeDelete|persistAndFlush|upsert|createQueryBuilder|getKnex)$/][callee.object.property.name='em']",
          message: 'ORM calls belong in the query module of their table (src/queries/<table>.ts): call a function of it.',
        },
      ],
    },
  },
  {
    // docs/architecture.md "Layers": a router validates and shapes; the service owns its transaction.
    files: ['src/routers/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.property.name='transactional']", message: 'A router does not open a transaction: the service that changes state owns it.' },
        { selector: "CallExpression[callee.property.name='execute']", message: 'No SQL in a router: call a service.' },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'examples/**/*.mjs'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-console': 'off' },
  },
);
