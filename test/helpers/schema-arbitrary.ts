import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { PASSWORD, unique } from './api.js';
import type { JsonSchema } from './routes.js';

/**
 * Strings that break careless parsers, encoders and databases: empty and blank, NUL, lone surrogates,
 * combining marks, bidi overrides, BOM, case-folding traps, numbers and keywords as strings, injection
 * and traversal probes, an over-long value.
 */
export const EDGE_STRINGS = [
  '', ' ', '\t\r\n', '\u0000', 'a\u0000b', '\ud800', '\udfff', 'x\ud83d', '💥🔥', 'e\u0301', '\u202eevil', '\ufeffbom', 'İı', 'ß',
  '0', '-1', '1e309', '9007199254740993', 'NaN', 'Infinity', 'null', 'true', 'undefined', '[]', '{}', '__proto__', 'constructor',
  "' or '1'='1' --", '%00', '%E0%A4%A', '../../etc/passwd', '<script>alert(1)</script>', '${7*7}', '{{7*7}}',
  'a'.repeat(1025), 'Ａ＠ｅｘａｍｐｌｅ．ｃｏｍ', 'user@example.com\r\nBcc: x@evil.test',
];

/** Any JSON-ish junk: edge strings, numbers as strings, wrong types, nested values. */
export const junk: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...EDGE_STRINGS) },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

function types(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  return schema.type ? [schema.type] : [];
}

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  const maxLength = schema.maxLength ?? 1024;
  const fits = (s: string) => s.length >= (schema.minLength ?? 0) && s.length <= maxLength;
  if (schema.format === 'email') {
    return fc.oneof(fc.emailAddress(), fc.constantFrom('a@b.co', 'User.Name+tag@Example.COM')).filter(fits);
  }
  if (schema.format === 'uuid') return fc.uuid();
  if (schema.format === 'date-time') {
    return fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
  }
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern)).filter(fits);
  const min = schema.minLength ?? 0;
  return fc.oneof(
    fc.string({ minLength: min, maxLength: Math.min(maxLength, min + 40) }),
    fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.min(maxLength, min + 20) }).filter(fits),
    fc.constant('x'.repeat(maxLength)),
  );
}

/** Values conforming to `schema` (as far as JSON Schema can say; Zod refinements may still refuse). */
export function valueArbitrary(schema: JsonSchema): fc.Arbitrary<unknown> {
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives && alternatives.length > 0) return fc.oneof(...alternatives.map(valueArbitrary));
  if (schema.enum && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  const kinds = types(schema);
  if (kinds.length > 1) return fc.oneof(...kinds.map((type) => valueArbitrary({ ...schema, type })));
  switch (kinds[0]) {
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000_000 });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(schema.items ? valueArbitrary(schema.items) : junk, { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, 4) });
    case 'object':
      return objectArbitrary(schema, 0);
    default:
      return junk;
  }
}

/**
 * Objects shaped by `schema`, each property independently valid (mostly), junk (sometimes) or absent
 * (sometimes), plus now and then unknown keys. `junkWeight` 0 gives conforming-looking objects.
 */
export function objectArbitrary(schema: JsonSchema, junkWeight = 1): fc.Arbitrary<Record<string, unknown>> {
  const shape: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const value = junkWeight > 0 ? fc.oneof({ weight: 4, arbitrary: valueArbitrary(property) }, { weight: junkWeight, arbitrary: junk }) : valueArbitrary(property);
    shape[name] = fc.option(value, { nil: undefined, freq: 6 });
  }
  const extra = junkWeight > 0 ? fc.option(fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'role', 'tenantId', 'extra'), junk, { maxKeys: 2 }), { nil: undefined, freq: 3 }) : fc.constant(undefined);
  return fc.tuple(fc.record(shape), extra).map(([known, more]) => {
    const out: Record<string, unknown> = { ...(more ?? {}) };
    for (const [key, value] of Object.entries(known)) if (value !== undefined) out[key] = value;
    return out;
  });
}

/** Names whose sample value must be the fixture's password so a call can get past the credential check. */
const PASSWORD_FIELDS = new Set(['password', 'currentPassword']);

/**
 * One deterministic, plausible value for `schema` (required properties only): a unique email, a
 * future date, the fixtures' password for password fields, the lower bound of numbers, the first enum.
 */
export function sampleValue(schema: JsonSchema, name = ''): unknown {
  if (PASSWORD_FIELDS.has(name)) return PASSWORD;
  if (name === 'newPassword') return `${PASSWORD} new`;
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives && alternatives.length > 0) return sampleValue(alternatives[0]!, name);
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  switch (types(schema)[0]) {
    case 'string': {
      if (schema.format === 'email') return `probe-${unique()}@example.com`;
      if (schema.format === 'uuid') return randomUUID();
      if (schema.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
      if (schema.pattern) return fc.sample(fc.stringMatching(new RegExp(schema.pattern)), { numRuns: 1, seed: 1 })[0];
      const text = `Probe ${unique()}`;
      const min = schema.minLength ?? 1;
      return (text.length >= min ? text : text + 'x'.repeat(min - text.length)).slice(0, schema.maxLength ?? text.length + min);
    }
    case 'integer':
    case 'number':
      return schema.minimum ?? schema.maximum ?? 1;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = sampleValue(schema.properties?.[key] ?? {}, key);
      return out;
    }
    default:
      return 'probe';
  }
}
