import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseKeyring } from '../../src/config.js';

const dataDir = () => mkdtempSync(path.join(tmpdir(), 'idp-config-'));

describe('configuration', () => {
  it('applies the documented defaults and generates dev secrets once, kept in DATA_DIR', () => {
    const dir = dataDir();
    const a = loadConfig({ DATA_DIR: dir });
    expect(a.port).toBe(3000);
    expect(a.host).toBe('0.0.0.0');
    expect(a.databaseUrl).toBeUndefined();
    expect(a.mailFrom).toBe('no-reply@localhost');
    expect(a.publicUrl).toBe('http://localhost:3000');
    expect(a.idpIssuer).toBe('https://accounts.google.com');
    expect(a.rateLimitScale).toBe(1);
    expect(a.trustProxy).toBe(false);
    expect(a.logLevel).toBe('info');
    expect(a.generatedSecrets).toEqual(['JWT_SECRET', 'ENCRYPTION_KEYS']);
    expect(a.jwtSecret.length).toBeGreaterThanOrEqual(32);
    const b = loadConfig({ DATA_DIR: dir });
    expect(b.jwtSecret.equals(a.jwtSecret)).toBe(true);
    expect(b.encryptionKeys[0]!.key.equals(a.encryptionKeys[0]!.key)).toBe(true);
    const file = path.join(dir, 'secrets.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toHaveProperty('jwtSecret');
  });

  it('refuses a JWT_SECRET under 32 bytes, naming it', () => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), JWT_SECRET: 'short' })).toThrow(/JWT_SECRET/);
  });

  it('refuses an empty TENANT_CREATION_TOKEN (an unset CI variable) instead of leaving workspace creation open', () => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), TENANT_CREATION_TOKEN: '' })).toThrow(/TENANT_CREATION_TOKEN is set but empty/);
    expect(() => loadConfig({ DATA_DIR: dataDir(), TENANT_CREATION_TOKEN: '  ' })).toThrow(/TENANT_CREATION_TOKEN/);
    expect(loadConfig({ DATA_DIR: dataDir() }).tenantCreationToken).toBeUndefined();
  });

  it('refuses missing secrets when NODE_ENV=production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR: dataDir() })).toThrow(ConfigError);
  });

  it.each([
    ['RATE_LIMIT_SCALE', '0'],
    ['RATE_LIMIT_SCALE', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'http://x'],
    ['SMTP_URL', 'ftp://x'],
    ['LOG_LEVEL', 'loud'],
    ['TRUST_PROXY', 'maybe'],
    ['PUBLIC_URL', 'not a url'],
  ])('refuses %s=%s with a message naming it', (name, value) => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), [name]: value })).toThrow(new RegExp(name));
  });

  it('parses a keyring; the last key encrypts', () => {
    const k1 = Buffer.alloc(32, 1).toString('base64');
    const k2 = Buffer.alloc(32, 2).toString('base64');
    const ring = parseKeyring(`v1:${k1}, v2:${k2}`);
    expect(ring.map((e) => e.version)).toEqual(['v1', 'v2']);
    expect(() => parseKeyring(`v1:${Buffer.alloc(16).toString('base64')}`)).toThrow(/32 bytes/);
    expect(() => parseKeyring(`v1:${k1},v1:${k2}`)).toThrow(/unique/);
    expect(() => parseKeyring('nonsense')).toThrow(ConfigError);
  });

  it('takes production secrets from the environment', () => {
    const c = loadConfig({
      NODE_ENV: 'production',
      DATA_DIR: dataDir(),
      JWT_SECRET: 'x'.repeat(40),
      ENCRYPTION_KEYS: `v7:${Buffer.alloc(32, 9).toString('base64')}`,
      TRUST_PROXY: 'true',
      PUBLIC_URL: 'https://id.example.com/',
    });
    expect(c.generatedSecrets).toEqual([]);
    expect(c.trustProxy).toBe(true);
    expect(c.publicUrl).toBe('https://id.example.com');
    expect(c.encryptionKeys[0]!.version).toBe('v7');
  });
});
