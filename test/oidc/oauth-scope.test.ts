import { describe, expect, it } from 'vitest';
import { hasScope, scopeTokens } from '../../src/lib/oauth-scope.js';

// RFC 6749 §3.3: a scope value is space-delimited and case-sensitive; a pure rule with no HTTP meaning.
describe('scope values (RFC 6749 §3.3)', () => {
  it('splits on single spaces, leaves empty tokens out and reads a non-string as no scope', () => {
    expect(scopeTokens('openid email offline_access')).toEqual(['openid', 'email', 'offline_access']);
    expect(scopeTokens(' openid  email ')).toEqual(['openid', 'email']);
    expect(scopeTokens('')).toEqual([]);
    for (const absent of [undefined, null, 42, ['openid']]) expect(scopeTokens(absent)).toEqual([]);
  });

  it('finds a token only whole and in the same case', () => {
    expect(hasScope('openid roles', 'roles')).toBe(true);
    expect(hasScope('openid organizations', 'organization')).toBe(false);
    expect(hasScope('openid Roles', 'roles')).toBe(false);
    expect(hasScope(undefined, 'openid')).toBe(false);
  });
});
