import { parseImportFile, type ParsedImportFile } from './user-import';

/** What the import page's worker answers: the file read, or that the browser could not read it. */
export type ImportWorkerAnswer = { ok: true; parsed: ParsedImportFile } | { ok: false };

/**
 * The import page reads its file here, off the page's thread (docs/web.md "Importing users"): a file
 * of a few hundred thousand users takes seconds to parse, and the page stays responsive meanwhile.
 * Receives a `File`, answers one {@link ImportWorkerAnswer}.
 */
self.onmessage = async (event: MessageEvent<File>) => {
  let answer: ImportWorkerAnswer;
  try {
    answer = { ok: true, parsed: parseImportFile(await event.data.text()) };
  } catch {
    answer = { ok: false };
  }
  self.postMessage(answer);
};
