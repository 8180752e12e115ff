import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { useDeferredValue, useEffect, useId, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { downloadFile, restFetch, toFormError, trpc, type RouterOutputs } from '../api';
import { usePageTitle, useSlug } from '../hooks';
import { formatNumber } from '../i18n';
import {
  checkHashSettings, DEFAULT_HASH_SETTINGS, HASH_ALGORITHMS, hashProblems, MAX_FILE_BYTES, MAX_IMPORT_ROWS, needsPbkdf2Parameters, parseFailureReport,
  PBKDF2_DIGESTS, prepareUpload, PREVIEW_ROWS, problemKind, type HashSettingField, type HashSettingProblem, type HashSettings, type ImportProblem,
  type ImportRow, type ParsedImportFile,
} from '../user-import';
import type { ImportWorkerAnswer } from '../user-import-worker';
import { ErrorAlert, Notice } from '../ui';
import type { ForeignAlgorithm } from '../../../src/security/foreign-passwords.js';

type ImportJob = RouterOutputs['users']['getImportJob']['job'];

/** How often the page asks for a running job's counters (GET users/import-jobs/{id}). */
const POLL_MS = 1000;
/** Problems and failures listed on the page; the rest are counted (the failure report has them all). */
const LISTED = 100;

const isAlgorithm = (value: string | undefined): value is ForeignAlgorithm => (HASH_ALGORITHMS as readonly (string | undefined)[]).includes(value);
const finished = (status: ImportJob['status'] | undefined): boolean => status === 'Completed' || status === 'Failed';

/** A file this page uploaded: for each line of the job, the file's line and the address, to read the failure report by. */
interface UploadedFile {
  jobId: string;
  fileName: string;
  fileLines: number[];
  emails: string[];
}

/**
 * `/app/{slug}/admin/users/import` (docs/web.md "Importing users", docs/import.md): a CSV or NDJSON
 * file read in the browser, its first rows and its problems by line, the algorithm and parameters of
 * bare password hashes, then an import job (POST users/import-jobs) followed by its counters until it
 * finishes, and its failure report by the file's lines. `?job=<id>` follows a job after a reload.
 */
export function ImportUsersPage() {
  const { t } = useTranslation('admin');
  usePageTitle(t('userImport.title'));
  const slug = useSlug();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { job: jobId } = useSearch({ from: '/app/$slug/signed-in/admin/users/import' });
  const [uploaded, setUploaded] = useState<UploadedFile | null>(null);
  return (
    <main className="page" id="main">
      <p><Link to="/app/$slug/admin/users" params={{ slug }}>{t('userImport.back')}</Link></p>
      <h1>{t('userImport.title')}</h1>
      <p>{t('userImport.intro')}</p>
      <FileSection
        slug={slug}
        started={!!jobId && uploaded?.jobId === jobId}
        onStarted={(job, file) => {
          queryClient.setQueryData(['import-job', slug, job.id], { job });
          setUploaded(file);
          void navigate({ to: '/app/$slug/admin/users/import', params: { slug }, search: { job: job.id }, replace: true });
        }}
        onReset={() => {
          setUploaded(null);
          if (jobId) void navigate({ to: '/app/$slug/admin/users/import', params: { slug }, search: {}, replace: true });
        }}
      />
      {jobId && <JobSection key={jobId} slug={slug} jobId={jobId} uploaded={uploaded?.jobId === jobId ? uploaded : null} />}
    </main>
  );
}

/** The file: chosen, read, previewed with its problems, the hash settings, and the button that starts the job. */
function FileSection({ slug, started, onStarted, onReset }: {
  slug: string;
  started: boolean;
  onStarted: (job: ImportJob, file: UploadedFile) => void;
  onReset: () => void;
}) {
  const { t } = useTranslation('admin');
  const fileId = useId();
  const hintId = useId();
  const [file, setFile] = useState<{ name: string; parsed: ParsedImportFile } | null>(null);
  const [reading, setReading] = useState<'reading' | 'unreadable' | 'tooLarge' | null>(null);
  const [settings, setSettings] = useState<HashSettings>(DEFAULT_HASH_SETTINGS);
  const [showSettingProblems, setShowSettingProblems] = useState(false);
  const [leftOutLate, setLeftOutLate] = useState<ImportProblem[]>([]);
  const algorithm = useDeferredValue(settings.algorithm);
  const rows = file?.parsed.rows;
  const problems = useMemo(() => {
    if (!file) return [];
    const all = [...file.parsed.problems, ...hashProblems(file.parsed.rows, algorithm), ...leftOutLate];
    return all.sort((a, b) => a.line - b.line);
  }, [file, algorithm, leftOutLate]);
  const settingProblems = useMemo(() => (file && file.parsed.bareHashRows > 0 ? checkHashSettings(settings, file.parsed.rows) : {}), [file, settings]);
  const needsPbkdf2 = useMemo(() => (file ? needsPbkdf2Parameters(file.parsed.rows) : false), [file]);
  const settingsOk = Object.keys(settingProblems).length === 0;
  const start = useMutation({
    mutationFn: async (chosen: { name: string; parsed: ParsedImportFile }) => {
      const prepared = prepareUpload(chosen.parsed.rows, settings);
      setLeftOutLate(prepared.tooLong);
      const res = await restFetch(slug, `/v1/${encodeURIComponent(slug)}/users/import-jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body: new Blob([prepared.lines.join('\n'), '\n'], { type: 'application/x-ndjson' }),
      });
      const { job } = (await res.json()) as { job: ImportJob };
      const emailOf = new Map(chosen.parsed.rows.map((row) => [row.line, typeof row.item.email === 'string' ? row.item.email : '']));
      return { job, uploaded: { jobId: job.id, fileName: chosen.name, fileLines: prepared.fileLines, emails: prepared.fileLines.map((line) => emailOf.get(line) ?? '') } };
    },
    onSuccess: ({ job, uploaded }) => onStarted(job, uploaded),
  });

  // the file is parsed by a worker (web/src/user-import-worker.ts); a new choice ends the last one's
  const worker = useRef<Worker | null>(null);
  useEffect(() => () => worker.current?.terminate(), []);
  const choose = (chosen: File | undefined) => {
    worker.current?.terminate();
    worker.current = null;
    setFile(null);
    setLeftOutLate([]);
    setShowSettingProblems(false);
    start.reset();
    onReset();
    if (!chosen) return setReading(null);
    if (chosen.size > MAX_FILE_BYTES) return setReading('tooLarge');
    setReading('reading');
    const reader = new Worker(new URL('../user-import-worker.ts', import.meta.url), { type: 'module' });
    worker.current = reader;
    const finish = (answer: ImportWorkerAnswer) => {
      reader.terminate();
      if (worker.current !== reader) return;
      worker.current = null;
      if (answer.ok) setFile({ name: chosen.name, parsed: answer.parsed });
      setReading(answer.ok ? null : 'unreadable');
    };
    reader.onmessage = (event: MessageEvent<ImportWorkerAnswer>) => finish(event.data);
    reader.onerror = () => finish({ ok: false });
    reader.postMessage(chosen);
  };

  const parsed = file?.parsed;
  const excluded = problems.filter((p) => problemKind(p.code) === 'excluded').length;
  const warned = new Set(problems.filter((p) => problemKind(p.code) === 'warning').map((p) => p.line)).size;
  const uploading = (rows?.length ?? 0) - leftOutLate.length;
  return (
    <>
      <section aria-labelledby="import-file" className="panel">
        <h2 id="import-file">{t('userImport.fileHeading')}</h2>
        <div className="field">
          <label htmlFor={fileId}>{t('userImport.file')}</label>
          <input
            id={fileId} type="file" aria-describedby={hintId}
            accept=".csv,.ndjson,.jsonl,.json,.txt,text/csv,application/x-ndjson,application/json,text/plain"
            onChange={(e) => choose(e.target.files?.[0])}
          />
          <div id={hintId} className="hint">
            <p className="hint">{t('userImport.csvHint')}</p>
            <p className="hint">{t('userImport.ndjsonHint')}</p>
          </div>
        </div>
        {reading === 'reading' && <p role="status">{t('userImport.reading')}</p>}
        {reading === 'unreadable' && <div role="alert" className="alert">{t('userImport.unreadable')}</div>}
        {reading === 'tooLarge' && <div role="alert" className="alert">{t('userImport.tooLarge', { size: formatNumber(MAX_FILE_BYTES / 1024 / 1024) })}</div>}
        {file && parsed && (
          <p role="status">
            {parsed.format === 'csv'
              ? t('userImport.readCsv', { name: file.name, count: parsed.rows.length, separator: t(`userImport.separators.${parsed.delimiter === ';' ? 'semicolon' : parsed.delimiter === '\t' ? 'tab' : 'comma'}`) })
              : t('userImport.readNdjson', { name: file.name, count: parsed.rows.length })}
          </p>
        )}
      </section>

      {file && parsed && parsed.rows.length > 0 && <Preview rows={parsed.rows} algorithm={settings.algorithm} />}

      {file && parsed && problems.length > 0 && <ProblemList problems={problems} />}

      {file && parsed && parsed.bareHashRows > 0 && !parsed.blocking && (
        <HashSettingsSection
          count={parsed.bareHashRows} settings={settings} onChange={setSettings} needsPbkdf2={needsPbkdf2}
          problems={showSettingProblems ? settingProblems : {}} disabled={started || start.isPending}
        />
      )}

      {file && parsed && (
        <section aria-labelledby="import-start" className="panel">
          <h2 id="import-start">{t('userImport.startHeading')}</h2>
          {parsed.blocking ? (
            <div role="alert" className="alert">{t('userImport.blocked')}</div>
          ) : (
            <>
              <p>{started ? t('userImport.sent', { count: uploading }) : t('userImport.willUpload', { count: uploading })}</p>
              {excluded > 0 && <p>{t('userImport.leftOut', { count: excluded })}</p>}
              {warned > 0 && <p>{t('userImport.warned', { count: warned })}</p>}
              {showSettingProblems && !settingsOk && <div role="alert" className="alert">{t('userImport.checkSettings')}</div>}
              <ErrorAlert error={start.error ? toFormError(start.error) : null} />
              {!started && (
                <button
                  type="button" disabled={start.isPending}
                  onClick={() => {
                    if (!settingsOk) return setShowSettingProblems(true);
                    start.mutate(file);
                  }}
                >
                  {start.isPending ? t('userImport.uploading') : t('userImport.start')}
                </button>
              )}
            </>
          )}
        </section>
      )}
    </>
  );
}

/** The first rows as they will be imported: address, role, verified, password. */
function Preview({ rows, algorithm }: { rows: readonly ImportRow[]; algorithm: HashSettings['algorithm'] }) {
  const { t } = useTranslation('admin');
  const shown = rows.slice(0, PREVIEW_ROWS);
  const password = (row: ImportRow): string => {
    if (row.bareHash) return algorithm ? t('userImport.preview.bareHash', { algorithm: t(`userImport.algorithms.${algorithm}`) }) : t('userImport.preview.bareHashUnknown');
    const record = row.item.password as { algorithm?: unknown } | undefined;
    return record ? String(record.algorithm) : t('userImport.preview.noPassword');
  };
  const verified = (value: unknown): string => (value === true ? t('userImport.preview.yes') : value === false || value === undefined ? t('userImport.preview.no') : String(value));
  return (
    <section aria-labelledby="import-preview" className="panel">
      <h2 id="import-preview">{t('userImport.preview.heading')}</h2>
      <p>{t('userImport.preview.shown', { count: shown.length, total: formatNumber(rows.length) })}</p>
      <div className="table-wrap">
        <table className="cards">
          <thead>
            <tr>
              <th scope="col">{t('userImport.line')}</th><th scope="col">{t('table.email')}</th><th scope="col">{t('table.role')}</th>
              <th scope="col">{t('userImport.preview.verified')}</th><th scope="col">{t('userImport.preview.password')}</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((row) => (
              <tr key={row.line}>
                <td role="cell" data-label={t('userImport.line')}>{row.line}</td>
                <td role="cell" data-label={t('table.email')} className="wrap">{row.item.email === undefined ? '—' : String(row.item.email)}</td>
                <td role="cell" data-label={t('table.role')}>{row.item.role === undefined ? t('values.roles.Member') : String(row.item.role)}</td>
                <td role="cell" data-label={t('userImport.preview.verified')}>{verified(row.item.emailVerified)}</td>
                <td role="cell" data-label={t('userImport.preview.password')}>{password(row)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** The problems found in the browser, by line: the first {@link LISTED}, then how many more. */
function ProblemList({ problems }: { problems: readonly ImportProblem[] }) {
  const { t } = useTranslation('admin');
  const shown = problems.slice(0, LISTED);
  return (
    <section aria-labelledby="import-problems" className="panel">
      <h2 id="import-problems">{t('userImport.problemsHeading', { count: problems.length })}</h2>
      <div className="table-wrap">
        <table className="cards">
          <thead>
            <tr><th scope="col">{t('userImport.line')}</th><th scope="col">{t('userImport.problem')}</th></tr>
          </thead>
          <tbody>
            {shown.map((problem, index) => (
              <tr key={`${problem.line}-${problem.code}-${index}`}>
                <td role="cell" data-label={t('userImport.line')}>{problem.line === 0 ? t('userImport.wholeFile') : problem.line}</td>
                <td role="cell" data-label={t('userImport.problem')} className="wrap">
                  {t(`userImport.problems.${problem.code}`, {
                    value: problem.code === 'tooManyRows' ? formatNumber(Number(problem.value)) : problem.value ?? '',
                    algorithm: isAlgorithm(problem.value) ? t(`userImport.algorithms.${problem.value}`) : '',
                    max: formatNumber(MAX_IMPORT_ROWS),
                  })}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {problems.length > shown.length && <p>{t('userImport.moreProblems', { count: problems.length - shown.length })}</p>}
    </section>
  );
}

/** A controlled text field of the hash settings, its problem beside it. */
function SettingField({ label, field, settings, onChange, problem, hint, disabled, inputMode = 'numeric' }: {
  label: string; field: HashSettingField; settings: HashSettings; onChange: (next: HashSettings) => void; problem?: HashSettingProblem; hint?: string;
  disabled: boolean; inputMode?: 'numeric' | 'text';
}) {
  const { t } = useTranslation('admin');
  const id = useId();
  const describedBy = [hint ? `${id}-hint` : null, problem ? `${id}-error` : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id} value={settings[field]} inputMode={inputMode} autoComplete="off" spellCheck={false} disabled={disabled}
        aria-invalid={problem ? true : undefined} aria-describedby={describedBy}
        onChange={(e) => onChange({ ...settings, [field]: e.target.value })}
      />
      {hint && <p id={`${id}-hint`} className="hint">{hint}</p>}
      {problem && <p id={`${id}-error`} className="field-error">{t(`userImport.settingProblems.${problem}`)}</p>}
    </div>
  );
}

/** The algorithm of the file's bare hashes and its parameters, applied to every one of them (docs/import.md "Password hashes"). */
function HashSettingsSection({ count, settings, onChange, problems, needsPbkdf2, disabled }: {
  count: number; settings: HashSettings; onChange: (next: HashSettings) => void; problems: Partial<Record<HashSettingField, HashSettingProblem>>;
  needsPbkdf2: boolean; disabled: boolean;
}) {
  const { t } = useTranslation('admin');
  const algorithmId = useId();
  const digestId = useId();
  const common = { settings, onChange, disabled };
  return (
    <section aria-labelledby="import-hashes" className="panel">
      <h2 id="import-hashes">{t('userImport.hashes.heading')}</h2>
      <p>{t('userImport.hashes.intro', { count })}</p>
      <div className="field">
        <label htmlFor={algorithmId}>{t('userImport.hashes.algorithm')}</label>
        <select
          id={algorithmId} value={settings.algorithm} disabled={disabled}
          aria-invalid={problems.algorithm ? true : undefined} aria-describedby={problems.algorithm ? `${algorithmId}-error` : undefined}
          onChange={(e) => onChange({ ...settings, algorithm: e.target.value as HashSettings['algorithm'] })}
        >
          <option value="">{t('userImport.hashes.choose')}</option>
          {HASH_ALGORITHMS.map((a) => <option key={a} value={a}>{t(`userImport.algorithms.${a}`)}</option>)}
        </select>
        {problems.algorithm && <p id={`${algorithmId}-error`} className="field-error">{t('userImport.hashes.chooseFirst')}</p>}
      </div>
      {(settings.algorithm === 'bcrypt' || settings.algorithm === 'argon2') && <p className="hint">{t('userImport.hashes.selfDescribing')}</p>}
      {settings.algorithm === 'scrypt' && (
        <fieldset>
          <legend>{t('userImport.hashes.parameters', { algorithm: t('userImport.algorithms.scrypt') })}</legend>
          <p className="hint">{t('userImport.hashes.saltPerUser')}</p>
          <SettingField label={t('userImport.hashes.N')} field="N" problem={problems.N} hint={t('userImport.hashes.NHint')} {...common} />
          <SettingField label={t('userImport.hashes.r')} field="r" problem={problems.r} {...common} />
          <SettingField label={t('userImport.hashes.p')} field="p" problem={problems.p} {...common} />
        </fieldset>
      )}
      {settings.algorithm === 'firebase-scrypt' && (
        <fieldset>
          <legend>{t('userImport.hashes.parameters', { algorithm: t('userImport.algorithms.firebase-scrypt') })}</legend>
          <p className="hint">{t('userImport.hashes.firebaseWhere')}</p>
          <SettingField label={t('userImport.hashes.signerKey')} field="signerKey" problem={problems.signerKey} inputMode="text" {...common} />
          <SettingField label={t('userImport.hashes.saltSeparator')} field="saltSeparator" problem={problems.saltSeparator} inputMode="text" {...common} />
          <SettingField label={t('userImport.hashes.rounds')} field="rounds" problem={problems.rounds} {...common} />
          <SettingField label={t('userImport.hashes.memCost')} field="memCost" problem={problems.memCost} {...common} />
        </fieldset>
      )}
      {settings.algorithm === 'pbkdf2' && (
        <fieldset>
          <legend>{t('userImport.hashes.parameters', { algorithm: t('userImport.algorithms.pbkdf2') })}</legend>
          <p className="hint">{needsPbkdf2 ? t('userImport.hashes.pbkdf2Explicit') : t('userImport.hashes.pbkdf2Django')}</p>
          {needsPbkdf2 && (
            <>
              <SettingField label={t('userImport.hashes.iterations')} field="iterations" problem={problems.iterations} {...common} />
              <div className="field">
                <label htmlFor={digestId}>{t('userImport.hashes.digest')}</label>
                <select id={digestId} value={settings.digest} disabled={disabled} onChange={(e) => onChange({ ...settings, digest: e.target.value as HashSettings['digest'] })}>
                  {PBKDF2_DIGESTS.map((d) => <option key={d} value={d}>{d}</option>)}
                </select>
              </div>
            </>
          )}
        </fieldset>
      )}
    </section>
  );
}

/** A job's progress (polled until it finishes), its counters, and when some lines failed, the failure report. */
function JobSection({ slug, jobId, uploaded }: { slug: string; jobId: string; uploaded: UploadedFile | null }) {
  const { t } = useTranslation('admin');
  const queryClient = useQueryClient();
  const progressId = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  const query = useQuery({
    queryKey: ['import-job', slug, jobId],
    queryFn: () => trpc.users.getImportJob.query({ tenantSlug: slug, id: jobId }),
    refetchInterval: (q) => (finished(q.state.data?.job.status) ? false : POLL_MS),
  });
  const job = query.data?.job;
  const done = finished(job?.status);
  // just started here: the job's progress is where the person goes next
  const justStarted = uploaded !== null;
  useEffect(() => {
    if (justStarted) heading.current?.focus();
  }, [justStarted]);
  useEffect(() => {
    if (done) void queryClient.invalidateQueries({ queryKey: ['users', slug] });
  }, [done, queryClient, slug]);
  const report = useMutation({ mutationFn: () => downloadFile(slug, `/v1/${encodeURIComponent(slug)}/users/import-jobs/${encodeURIComponent(jobId)}/errors`) });
  return (
    <section aria-labelledby="import-job" className="panel">
      <h2 id="import-job" ref={heading} tabIndex={-1}>{t('userImport.job.heading')}</h2>
      <ErrorAlert error={query.error ? toFormError(query.error) : null} />
      {job && (
        <>
          <p role="status">{t(`userImport.job.statuses.${job.status}`)}</p>
          <div className="field">
            <label htmlFor={progressId}>{t('userImport.job.progress', { processed: formatNumber(job.processed), total: formatNumber(job.total) })}</label>
            <progress id={progressId} className="import-progress" max={Math.max(job.total, 1)} value={job.processed} />
          </div>
          <dl className="facts">
            <dt>{t('userImport.job.created')}</dt><dd>{formatNumber(job.created)}</dd>
            <dt>{t('userImport.job.skipped')}</dt><dd>{formatNumber(job.skipped)}</dd>
            <dt>{t('userImport.job.failed')}</dt><dd>{formatNumber(job.failed)}</dd>
          </dl>
          {done && job.status === 'Completed' && <Notice>{t('userImport.job.done', { created: formatNumber(job.created), skipped: formatNumber(job.skipped), failed: formatNumber(job.failed) })}</Notice>}
          {done && job.failed > 0 && (
            <>
              <ErrorAlert error={report.error ? toFormError(report.error) : null} />
              <button type="button" className="secondary" onClick={() => report.mutate()} disabled={report.isPending}>{t('userImport.job.downloadReport')}</button>
              {uploaded && <Failures slug={slug} jobId={jobId} uploaded={uploaded} />}
            </>
          )}
          {done && <p><Link to="/app/$slug/admin/users" params={{ slug }}>{t('userImport.job.toUsers')}</Link></p>}
        </>
      )}
    </section>
  );
}

/** The failure report read by the file's lines (known while the page that uploaded the file is open). */
function Failures({ slug, jobId, uploaded }: { slug: string; jobId: string; uploaded: UploadedFile }) {
  const { t } = useTranslation('admin');
  const failures = useQuery({
    queryKey: ['import-errors', slug, jobId],
    queryFn: async () => parseFailureReport(await (await restFetch(slug, `/v1/${encodeURIComponent(slug)}/users/import-jobs/${encodeURIComponent(jobId)}/errors`)).text()),
    staleTime: Infinity,
  });
  if (failures.error) return <ErrorAlert error={toFormError(failures.error)} />;
  const items = failures.data ?? [];
  const shown = items.slice(0, LISTED);
  return (
    <div role="region" aria-labelledby="import-failures">
      <h3 id="import-failures">{t('userImport.job.failuresHeading', { name: uploaded.fileName })}</h3>
      <div className="table-wrap">
        <table className="cards">
          <thead>
            <tr><th scope="col">{t('userImport.line')}</th><th scope="col">{t('table.email')}</th><th scope="col">{t('userImport.job.reason')}</th></tr>
          </thead>
          <tbody>
            {shown.map((failure) => (
              <tr key={failure.index}>
                <td role="cell" data-label={t('userImport.line')}>{uploaded.fileLines[failure.index] ?? '—'}</td>
                <td role="cell" data-label={t('table.email')} className="wrap">{uploaded.emails[failure.index] || '—'}</td>
                <td role="cell" data-label={t('userImport.job.reason')}>{t(`userImport.reasons.${failure.reason}`, { defaultValue: failure.reason })}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {items.length > shown.length && <p>{t('userImport.job.moreFailures', { count: items.length - shown.length })}</p>}
    </div>
  );
}
