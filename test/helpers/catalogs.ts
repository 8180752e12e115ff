/** `{ 'a.b': 'text' }` for every string of a nested message catalog (pages' and mails' alike). */
export function flattenCatalog(node: unknown, prefix = '', out: Record<string, string> = {}): Record<string, string> {
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (typeof value === 'string') out[`${prefix}${key}`] = value;
    else flattenCatalog(value, `${prefix}${key}.`, out);
  }
  return out;
}

/** The `{{name}}` placeholders of a message, sorted. */
export const placeholdersOf = (text: string): string[] => [...text.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]!).sort();
