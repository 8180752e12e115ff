import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/rest/openapi.js';
import { issueInWords, REASON_MESSAGES, waitInWords } from '../../web/src/messages.js';

/** Every `details.reason` enum value anywhere in the document's error responses. */
function documentedReasons(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) {
    for (const item of node) documentedReasons(item, found);
  } else if (node && typeof node === 'object') {
    const reason = (node as { properties?: { reason?: { enum?: unknown } } }).properties?.reason?.enum;
    if (Array.isArray(reason)) for (const value of reason) found.add(String(value));
    for (const value of Object.values(node)) documentedReasons(value, found);
  }
  return found;
}

describe('the pages\' sentence for every error reason', () => {
  it('has a non-empty sentence for each details.reason the OpenAPI document lists, in the pages\' words', () => {
    const reasons = documentedReasons(buildOpenApiDocument('http://127.0.0.1'));
    expect(reasons.size).toBeGreaterThan(60);
    const messages = REASON_MESSAGES as Record<string, string>;
    const missing = [...reasons].filter((reason) => !messages[reason]?.trim());
    expect(missing).toEqual([]);
    for (const message of Object.values(messages)) {
      expect(message).toMatch(/^[A-Z].*\.$/);
      expect(message).not.toMatch(/\btenant\b/i);
    }
  });

  it('says a wait in words and validation issues as sentences', () => {
    expect(waitInWords(1)).toBe('1 second');
    expect(waitInWords(45)).toBe('45 seconds');
    expect(waitInWords(61)).toBe('2 minutes');
    expect(waitInWords(3600)).toBe('1 hour');
    expect(waitInWords(3601)).toBe('2 hours');
    expect(issueInWords('Too small: expected string to have >=12 characters')).toBe('Use at least 12 characters.');
    expect(issueInWords('Too big: expected string to have <=254 characters')).toBe('Use at most 254 characters.');
    expect(issueInWords('Invalid email address')).toBe('Enter an email address like name@example.com.');
    expect(issueInWords('Invalid input: expected string, received undefined')).toBe('This field is required.');
    expect(issueInWords('Something else')).toBe('Something else');
  });
});
