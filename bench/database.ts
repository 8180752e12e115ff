import pg from 'pg';

/** The bench's own database on the server of `DATABASE_URL`, dropped at the end. */
export interface BenchDatabase {
  name: string;
  /** `postgres://…/<name>` for the service. */
  url: string;
  drop(): Promise<void>;
}

function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Creates `idp_bench_<timestamp>` on the server of `serverUrl` (connecting to its own database). */
export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const name = `idp_bench_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: withDatabase(serverUrl, name),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Direct, parameterised SQL seeding of the bench database (not through the API, which would spend
 * an argon2 hash per user). Every row gets the same precomputed password hash.
 */
export class Seeder {
  private constructor(private readonly client: pg.Client) {}

  static async connect(url: string): Promise<Seeder> {
    const client = new pg.Client({ connectionString: url });
    // Errors surface through the failing query; this keeps a dropped connection from crashing the run.
    client.on('error', () => undefined);
    await client.connect();
    return new Seeder(client);
  }

  async tenantIdOf(slug: string): Promise<string> {
    const { rows } = await this.client.query<{ id: string }>('select id from tenant where slug = $1', [slug]);
    if (!rows[0]) throw new Error(`tenant ${slug} not found in the bench database`);
    return rows[0].id;
  }

  /**
   * Inserts `count` Active Members `<prefix><n>@bench.test` (n = 1…count) with `passwordHash`,
   * created one second apart.
   */
  async seedUsers(tenantId: string, prefix: string, count: number, passwordHash: string): Promise<void> {
    await this.client.query(
      `insert into app_user (id, tenant_id, email, password_hash, status, role, created_at, updated_at)
       select gen_random_uuid(), $1, $2 || g || '@bench.test', $3, 'Active', 'Member',
              now() - make_interval(secs => $4 - g), now() - make_interval(secs => $4 - g)
         from generate_series(1, $4::int) g`,
      [tenantId, prefix, passwordHash, count],
    );
    await this.client.query('analyze app_user');
  }

  /**
   * Inserts `count` audit events for a tenant, one second apart ending now, cycling through a few
   * actions, in batches of 100,000 rows (`onProgress` gets the rows written so far).
   */
  async seedAuditEvents(tenantId: string, actorId: string, count: number, onProgress: (done: number) => void): Promise<void> {
    const batch = 100_000;
    for (let start = 1; start <= count; start += batch) {
      const end = Math.min(count, start + batch - 1);
      await this.client.query(
        `insert into audit_event (id, tenant_id, action, actor_type, actor_id, target_type, target_id, ip, user_agent, details, created_at)
         select gen_random_uuid(), $1,
                (array['UserLogin','SessionCreated','UserLoginFailed','SessionRevoked','UserSignup'])[1 + g % 5],
                'user', $2::uuid, 'user', $2::text, '203.0.113.' || (g % 250), 'bench/1.0',
                jsonb_build_object('email', 'user' || (g % 10000) || '@bench.test'),
                now() - make_interval(secs => $3 - g)
           from generate_series($4::int, $5::int) g`,
        [tenantId, actorId, count, start, end],
      );
      onProgress(end);
    }
    await this.client.query('analyze audit_event');
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
