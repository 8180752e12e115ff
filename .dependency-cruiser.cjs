/**
 * The layering rules of docs/architecture.md "Layers", checked by `npm run lint:layers` (part of
 * `npm run lint`, so CI fails on a violation). Dependencies point one way:
 *   rest → routers → middleware → services → queries → (errors, security, lib, entities, db)
 * and nothing points back up. Type-only imports count too: a type from a higher layer is still a
 * dependency a newcomer has to follow.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle: two modules that each need the other cannot be read or tested alone.',
      from: { path: '^src' },
      to: { circular: true },
    },
    {
      name: 'services-below-the-api',
      severity: 'error',
      comment: 'Services, security, lib, entities and db never import the API layers (routers, middleware, rest) above them.',
      from: { path: '^src/(services|queries|errors|security|lib|entities|db|migrations)/' },
      to: { path: '^src/(routers|middleware|rest)/' },
    },
    {
      name: 'routers-do-not-wire',
      severity: 'error',
      comment: 'Routers define procedures; only src/rest wires them into Express.',
      from: { path: '^src/(routers|middleware)/' },
      to: { path: '^src/rest/' },
    },
    {
      name: 'middleware-below-routers',
      severity: 'error',
      comment: 'Middleware runs before a router; it never imports one.',
      from: { path: '^src/middleware/' },
      to: { path: '^src/routers/' },
    },
    {
      name: 'queries-below-features',
      severity: 'error',
      comment: 'src/queries holds one module per table (its SQL and ORM calls); features use them, they use no feature.',
      from: { path: '^src/queries/' },
      to: { path: '^src/services/' },
    },
    {
      name: 'error-catalogs-are-declarations',
      severity: 'error',
      comment: 'src/errors holds one error catalog per feature (reason, status, message); catalogs depend on src/lib only.',
      from: { path: '^src/errors/' },
      to: { path: '^src/(services|queries|security|db|entities)/' },
    },
    {
      name: 'security-is-a-toolbox',
      severity: 'error',
      comment: 'src/security holds primitives (hashing, JWT, keyring); features use it, it uses no feature.',
      from: { path: '^src/security/' },
      to: { path: '^src/services/' },
    },
    {
      name: 'lib-and-entities-are-leaves',
      severity: 'error',
      comment: 'src/lib and src/entities are used by every layer and depend on none of the feature code.',
      from: { path: '^src/(lib|entities)/' },
      to: { path: '^src/(services|queries|security|db)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
    exclude: { path: '^(dist|web|test|bench|packages|examples)/' },
  },
};
