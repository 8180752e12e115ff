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

/**
 * Creates `<prefix>_<timestamp>_<pid>` on the server of `serverUrl` (connecting to its own database);
 * `prefix` is a fixed SQL identifier of the bench (`idp_bench` for the service's database).
 */
export async function createBenchDatabase(serverUrl: string, prefix: 'idp_bench' | 'better_auth_bench' = 'idp_bench'): Promise<BenchDatabase> {
  const name = `${prefix}_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${process.pid}`;
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

  /**
   * Seeds `organizations` organizations and `memberships` memberships in one tenant, with the people
   * they need (docs/performance.md "Organizations at scale"); deterministic (a seeded shuffle), set
   * based (`unnest` of arrays built here, batches of 100,000 rows).
   *
   * - Organizations are created one minute apart, named `<Company> <Sector> <n>` from 20 × 20 words
   *   (so one word matches a twentieth of them, two words a four-hundredth).
   * - Sizes: half the memberships spread evenly over every organization, the other half Zipf-like
   *   (the k-th largest gets 1/k of that half's share); the largest is the oldest organization, the
   *   others scattered over the creation order. With the defaults: most organizations have 5 to 10
   *   members, the largest about 41,000, a dozen over 3,000.
   * - People (`person<n>@customers.test`, Active Members): 45 % belong to 1 organization, 30 % to 2,
   *   15 % to 3, 9 % to 4 to 10, 1 % to 30; one in 200 was soft-deleted within the last 30 days (their
   *   memberships stay, hidden).
   * - Roles: a template of `owner`, `admin`, `member`, `billing`; every member holds `member`, the
   *   first member of an organization also `owner`, the next twentieth of its members `admin`, a
   *   tenth of the people `billing` too.
   * @returns the ids the bench times against: the largest organization, one of about 1,000 members
   *   and a typical one (the median size), a person in 2 organizations and a person in the most.
   */
  async seedOrganizations(
    tenantId: string, organizations: number, memberships: number, onProgress: (done: number) => void,
  ): Promise<SeededOrganizations> {
    const random = mulberry32(20261126);
    // Sizes by rank: an even half plus a Zipf half (remainders to the largest ones, so the sum is exact).
    const even = Math.floor(memberships / 2);
    const zipf = memberships - even;
    let harmonic = 0;
    for (let r = 1; r <= organizations; r++) harmonic += 1 / r;
    const sizeByRank = new Int32Array(organizations);
    let assigned = 0;
    for (let r = 0; r < organizations; r++) {
      sizeByRank[r] = Math.floor(even / organizations) + (r < even % organizations ? 1 : 0) + Math.floor(zipf / (r + 1) / harmonic);
      assigned += sizeByRank[r]!;
    }
    for (let r = 0; assigned < memberships; r = (r + 1) % organizations, assigned++) sizeByRank[r]!++;
    // Rank r is organization (r * stride) mod n: the largest the oldest, the rest scattered.
    let stride = 7919;
    while (gcd(stride, organizations) !== 1) stride++;
    const size = new Int32Array(organizations);
    for (let r = 0; r < organizations; r++) size[(r * stride) % organizations] = sizeByRank[r]!;

    // People and their slots: person p holds slotsOf(p) memberships, people numbered until the slots fill.
    const slotsOf = (p: number): number => {
      const bucket = p % 100;
      if (bucket < 45) return 1;
      if (bucket < 75) return 2;
      if (bucket < 90) return 3;
      if (bucket < 99) return 4 + (p % 7);
      return 30;
    };
    const slots = new Int32Array(memberships);
    let people = 0;
    for (let filled = 0; filled < memberships; people++) {
      for (let k = slotsOf(people); k > 0 && filled < memberships; k--) slots[filled++] = people;
    }
    for (let i = memberships - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      const t = slots[i]!; slots[i] = slots[j]!; slots[j] = t;
    }
    if (people < sizeByRank[0]!) throw new Error(`${people} people cannot fill an organization of ${sizeByRank[0]}`);

    // People: ids derived from their number, so memberships can name them without a look-up.
    const personId = `md5($1::text || ':person:' || g)::uuid`;
    for (let start = 0; start < people; start += 100_000) {
      const end = Math.min(people, start + 100_000) - 1;
      await this.client.query(
        `insert into app_user (id, tenant_id, email, password_hash, status, role, created_at, updated_at, deleted_at)
         select ${personId}, $1::uuid, 'person' || g || '@customers.test', 'not-a-hash', 'Active', 'Member',
                now() - interval '100 days', now() - interval '100 days', case when g % 200 = 199 then now() - make_interval(hours => g % 720) end
           from generate_series($2::int, $3::int) g`,
        [tenantId, start, end],
      );
    }
    const base = new Date(Date.now() - 86_400_000 - organizations * 60_000);
    await this.client.query(
      `insert into organization (id, tenant_id, name, description, created_at, updated_at)
       select md5($1::text || ':organization:' || g)::uuid, $1::uuid,
              (array['Acme','Globex','Initech','Umbrella','Stark','Wayne','Wonka','Tyrell','Cyberdyne','Soylent',
                     'Hooli','Vandelay','Northwind','Contoso','Fabrikam','Aperture','Oscorp','Piedpiper','Massive','Gringotts'])[1 + g % 20]
              || ' ' ||
              (array['Logistics','Health','Bank','Foods','Energy','Labs','Media','Motors','Insurance','Retail',
                     'Analytics','Robotics','Travel','Textiles','Pharma','Studios','Capital','Systems','Airlines','Games'])[1 + (g / 20) % 20]
              || ' ' || (g + 1),
              case when g % 3 = 0 then 'Customer since ' || to_char($2::timestamptz + make_interval(mins => g), 'YYYY-MM') end,
              $2::timestamptz + make_interval(mins => g), $2::timestamptz + make_interval(mins => g)
         from generate_series(0, $3::int - 1) g`,
      [tenantId, base, organizations],
    );
    const roles = await this.client.query<{ id: string; name: string }>(
      `insert into organization_role (id, tenant_id, name, description, permissions, created_at, updated_at)
       select gen_random_uuid(), $1::uuid, r.name, null, r.permissions, now(), now()
         from (values ('owner', '["org:manage","members:manage","billing:manage","read:invoices"]'::jsonb),
                      ('admin', '["members:manage","read:invoices"]'::jsonb),
                      ('member', '["read:projects"]'::jsonb),
                      ('billing', '["billing:manage","read:invoices"]'::jsonb)) as r(name, permissions)
       returning id, name`,
      [tenantId],
    );
    const roleId = (name: string) => roles.rows.find((r) => r.name === name)!.id;

    // Memberships, organization by organization; a person drawn twice for one organization is moved
    // on to the next person. They are written in a shuffled order, as people join over time: an
    // organization's rows are scattered over the table, not stored side by side.
    const all = { o: new Int32Array(memberships), p: new Int32Array(memberships), j: new Int32Array(memberships), roles: new Int32Array(memberships) };
    let typical = 0;
    let thousand = 0;
    const median = [...size].sort((a, b) => a - b)[Math.floor(organizations / 2)]!;
    const membershipsOf = new Int32Array(people);
    for (let o = 0, i = 0; o < organizations; o++) {
      const members = new Set<number>();
      if (size[o] === median && typical === 0) typical = o;
      if (Math.abs(size[o]! - 1000) < Math.abs(size[thousand]! - 1000)) thousand = o;
      for (let j = 0; j < size[o]!; j++, i++) {
        let p = slots[i]!;
        while (members.has(p)) p = (p + 1) % people;
        members.add(p);
        membershipsOf[p]!++;
        all.o[i] = o; all.p[i] = p; all.j[i] = j;
        all.roles[i] = 4 | (j === 0 ? 1 : 0) | (j >= 1 && j <= size[o]! / 20 ? 2 : 0) | (p % 10 === 0 ? 8 : 0);
      }
    }
    const order = new Int32Array(memberships);
    for (let i = 0; i < memberships; i++) order[i] = i;
    for (let i = memberships - 1; i > 0; i--) {
      const k = Math.floor(random() * (i + 1));
      const t = order[i]!; order[i] = order[k]!; order[k] = t;
    }
    for (let start = 0; start < memberships; start += 100_000) {
      const picked = Array.from(order.subarray(start, Math.min(memberships, start + 100_000)));
      const column = (values: Int32Array) => picked.map((i) => values[i]!);
      const [o, p, j, roleBits] = [column(all.o), column(all.p), column(all.j), column(all.roles)];
      await this.client.query('begin');
      await this.client.query(
        `insert into organization_membership (organization_id, user_id, tenant_id, created_at)
         select md5($1::text || ':organization:' || o)::uuid, md5($1::text || ':person:' || p)::uuid, $1::uuid,
                $2::timestamptz + make_interval(mins => o) + make_interval(secs => j * 0.01)
           from unnest($3::int[], $4::int[], $5::int[]) as t(o, p, j)`,
        [tenantId, base, o, p, j],
      );
      await this.client.query(
        `insert into organization_membership_role (organization_id, user_id, role_id, tenant_id)
         select md5($1::text || ':organization:' || o)::uuid, md5($1::text || ':person:' || p)::uuid, r.id, $1::uuid
           from unnest($2::int[], $3::int[], $4::int[]) as t(o, p, roles)
           join (values (1, $5::uuid), (2, $6::uuid), (4, $7::uuid), (8, $8::uuid)) as r(bit, id) on roles & r.bit <> 0`,
        [tenantId, o, p, roleBits, roleId('owner'), roleId('admin'), roleId('member'), roleId('billing')],
      );
      await this.client.query('commit');
      onProgress(start + picked.length);
    }
    // As autovacuum leaves a table after inserts: statistics and the visibility map (index-only scans) up to date.
    for (const table of ['app_user', 'organization', 'organization_role', 'organization_membership', 'organization_membership_role']) {
      await this.client.query(`vacuum analyze ${table}`);
    }
    let busiest = 0;
    let inTwo = -1;
    for (let p = 0; p < people; p++) {
      if (p % 200 === 199) continue; // soft-deleted
      if (membershipsOf[p]! > membershipsOf[busiest]!) busiest = p;
      if (inTwo < 0 && membershipsOf[p] === 2) inTwo = p;
    }
    const ids = await this.client.query<{ largest: string; thousand: string; typical: string; two: string; busiest: string }>(
      `select md5($1::text || ':organization:' || $2::int)::uuid as largest, md5($1::text || ':organization:' || $3::int)::uuid as thousand,
              md5($1::text || ':organization:' || $4::int)::uuid as typical,
              md5($1::text || ':person:' || $5::int)::uuid as two, md5($1::text || ':person:' || $6::int)::uuid as busiest`,
      [tenantId, 0, thousand, typical, inTwo, busiest],
    );
    const row = ids.rows[0]!;
    return {
      people,
      largest: { id: row.largest, members: size[0]! },
      thousand: { id: row.thousand, members: size[thousand]! },
      typical: { id: row.typical, members: size[typical]! },
      personInTwo: row.two,
      busiest: { id: row.busiest, organizations: membershipsOf[busiest]! },
    };
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

/** What `Seeder.seedOrganizations` made, for the bench to time against (member counts include soft-deleted people). */
export interface SeededOrganizations {
  /** People seeded for the memberships. */
  people: number;
  largest: { id: string; members: number };
  thousand: { id: string; members: number };
  typical: { id: string; members: number };
  /** A live person in exactly 2 organizations. */
  personInTwo: string;
  /** The live person in the most organizations. */
  busiest: { id: string; organizations: number };
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** A small seeded pseudo-random generator (mulberry32): the same seed gives the same sequence, in [0, 1). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
