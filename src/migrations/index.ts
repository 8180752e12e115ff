import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261123000000_initial } from './Migration20261123000000_initial.js';
import { Migration20261123040000_account_token } from './Migration20261123040000_account_token.js';

/**
 * Every committed migration, in the order it is applied. Listed explicitly so the same list runs
 * from TypeScript sources (tests) and compiled output (npm start). A new migration is appended here.
 */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261123000000_initial', class: Migration20261123000000_initial },
  { name: 'Migration20261123040000_account_token', class: Migration20261123040000_account_token },
];
