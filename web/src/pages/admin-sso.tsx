import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { reasonAsFormError, toFormError, trpc, type FormError, type RouterInputs, type RouterOutputs } from '../api';
import { when } from '../audit-format';
import { useConfirm } from '../confirm';
import { usePageTitle, useSlug } from '../hooks';
import { SSO_SETUP_KINDS, type SsoSetupKind } from '../sso-kinds';
import { Checkbox, CopyField, ErrorAlert, Field, formValue, Notice } from '../ui';

type Connection = RouterOutputs['sso']['get']['connection'];
type Protocol = Connection['protocol'];
type SamlInput = NonNullable<RouterInputs['sso']['create']['saml']>;
type TestResult = RouterOutputs['sso']['testResult'];

const SSO_KINDS = SSO_SETUP_KINDS;
type SsoKind = SsoSetupKind;
/** The protocols each kind of provider offers, the first being the one the setup suggests. */
const PROTOCOLS_OF: Record<SsoKind, readonly Protocol[]> = {
  okta: ['saml', 'oidc'], entra: ['saml', 'oidc'], google: ['saml', 'oidc'], adfs: ['saml'], saml: ['saml'], oidc: ['oidc'],
};
type SamlKind = Exclude<SsoKind, 'oidc'>;
type OidcKind = Exclude<SsoKind, 'adfs' | 'saml'>;
const isSamlKind = (kind: SsoKind): kind is SamlKind => PROTOCOLS_OF[kind].includes('saml');
const isOidcKind = (kind: SsoKind): kind is OidcKind => PROTOCOLS_OF[kind].includes('oidc');
/** The kind whose instructions the connection page shows by default, for a protocol. */
const fallbackKind = (protocol: Protocol): SsoKind => (protocol === 'saml' ? 'saml' : 'oidc');

/** Connections this page just created: their page says so once (a reload does not). */
const justCreated = new Set<string>();

/** A certificate expiring within this many days is warned about. */
const CERTIFICATE_WARNING_DAYS = 30;
const DAY_MS = 86_400_000;

/** Email domains typed in one field, separated by spaces, commas or semicolons. */
const domainWords = (text: string | undefined): string[] => [...new Set((text ?? '').split(/[\s,;]+/).filter(Boolean))];
/** The organization roles checked in a form (checkboxes named `role`). */
const checkedRoles = (form: FormData): string[] => form.getAll('role').filter((value): value is string => typeof value === 'string');

/**
 * A change refused by the API, with the field messages the forms show: a taken domain beside the
 * domains field, as is a domain the schema refused (its issue path ends in the list index).
 */
function changeError(err: unknown): FormError | null {
  if (!err) return null;
  const error = toFormError(err);
  const domainIssue = Object.entries(error.fields).find(([key]) => /^\d+$/.test(key))?.[1];
  const domains = error.reason === 'sso_domain_taken' ? error.message : error.fields.domains ?? domainIssue;
  return domains ? { ...error, fields: { ...error.fields, domains } } : error;
}

/**
 * The alert of a refused change. Creating, changing and deleting a connection needs a sign-in less
 * than 10 minutes old (`reauthentication_required`, docs/sso.md "Who may change a connection"): then
 * it offers to sign in again; what was typed stays in the form.
 */
function ChangeAlert({ error, slug }: { error: FormError | null; slug: string }) {
  const { t } = useTranslation('sso');
  if (!error) return null;
  if (error.reason !== 'reauthentication_required') return <ErrorAlert error={error} />;
  return (
    <div role="alert" className="alert">
      {error.message}{' '}
      <Link to="/app/$slug/sign-in" params={{ slug }}>{t('reauthenticate')}</Link>
    </div>
  );
}

/** A labelled multi-line input (metadata XML, a certificate), its validation message linked under it. */
function TextArea({ label, name, error, hint, value, onChange, defaultValue, rows = 6 }: {
  label: string; name: string; error?: FormError | null; hint?: string; value?: string; onChange?: (value: string) => void; defaultValue?: string; rows?: number;
}) {
  const id = useId();
  const message = error?.fields[name];
  const describedBy = [hint ? `${id}-hint` : null, message ? `${id}-error` : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id} name={name} rows={rows} spellCheck={false} aria-invalid={message ? true : undefined} aria-describedby={describedBy}
        value={value} defaultValue={defaultValue} onChange={onChange ? (e) => onChange(e.target.value) : undefined}
      />
      {hint && <p id={`${id}-hint`} className="hint">{hint}</p>}
      {message && <p id={`${id}-error`} className="field-error">{message}</p>}
    </div>
  );
}

/** A read-only multi-line value (a PEM certificate) with a copy button. */
function CopyBlock({ label, value, hint }: { label: string; value: string; hint?: string }) {
  const { t } = useTranslation('admin');
  const id = useId();
  const [copied, setCopied] = useState(false);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} readOnly rows={4} value={value} aria-describedby={hint ? `${id}-hint` : undefined} />
      {hint && <p id={`${id}-hint`} className="hint">{hint}</p>}
      <div>
        <button type="button" className="secondary" aria-label={copied ? t('applications.copiedLabel', { label }) : t('applications.copyLabel', { label })} onClick={() => void navigator.clipboard.writeText(value).then(() => setCopied(true))}>
          {copied ? t('applications.copied') : t('applications.copy')}
        </button>
      </div>
    </div>
  );
}

/** Radio buttons of one choice, as a labelled group. */
function Choice<T extends string>({ legend, name, options, value, onChange, label, hint }: {
  legend: string; name: string; options: readonly T[]; value: T; onChange: (value: T) => void; label: (option: T) => string; hint?: (option: T) => string;
}) {
  const id = useId();
  return (
    <fieldset>
      <legend>{legend}</legend>
      {options.map((option) => (
        <div key={option} className="choice">
          <input id={`${id}-${option}`} type="radio" name={name} value={option} checked={value === option} onChange={() => onChange(option)} />
          <label htmlFor={`${id}-${option}`}>
            {label(option)}
            {hint && <span className="legend-detail muted">{hint(option)}</span>}
          </label>
        </div>
      ))}
    </fieldset>
  );
}

/**
 * The organization a person's first sign-in makes them a member of, and their organization roles
 * there (docs/sso.md "Connections"); the roles show once an organization is picked.
 */
function OrganizationPicker({ slug, organizationId, roles, onChange }: { slug: string; organizationId: string; roles: readonly string[]; onChange: (id: string) => void }) {
  const { t } = useTranslation('sso');
  const id = useId();
  const organizations = useQuery({ queryKey: ['organizations', slug, 'sso-picker'], queryFn: () => trpc.organizations.list.query({ tenantSlug: slug, limit: 200 }) });
  const organizationRoles = useQuery({ queryKey: ['organization-roles', slug], queryFn: () => trpc.organizationRoles.list.query({ tenantSlug: slug }), enabled: organizationId !== '' });
  const items = organizations.data?.items ?? [];
  return (
    <>
      <div className="field">
        <label htmlFor={id}>{t('setup.organization')}</label>
        <select id={id} name="organizationId" value={organizationId} onChange={(e) => onChange(e.target.value)} aria-describedby={`${id}-hint`}>
          <option value="">{t('setup.noOrganization')}</option>
          {organizationId !== '' && organizations.isSuccess && !items.some((o) => o.id === organizationId) && <option value={organizationId}>{organizationId}</option>}
          {items.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
        </select>
        <p id={`${id}-hint`} className="hint">{t('setup.organizationHint')}</p>
      </div>
      {organizationId !== '' && (organizationRoles.data?.items.length ?? 0) > 0 && (
        <fieldset>
          <legend>{t('setup.roles')}</legend>
          <div className="checks">
            {organizationRoles.data?.items.map((role) => (
              <div key={role.id} className="field checkbox">
                <input id={`${id}-role-${role.id}`} type="checkbox" name="role" value={role.name} defaultChecked={roles.includes(role.name)} />
                <label htmlFor={`${id}-role-${role.id}`}>{role.name}</label>
              </div>
            ))}
          </div>
        </fieldset>
      )}
    </>
  );
}

type SamlSource = 'xml' | 'url' | 'manual';
const SAML_SOURCES: readonly SamlSource[] = ['xml', 'url', 'manual'];

/**
 * The SAML identity provider's values: its metadata XML (pasted, or an .xml file read in the
 * browser), its metadata URL, or its entity id, single sign-on URL and certificate typed in.
 * `keep` (on the connection page) leaves the stored ones.
 */
function SamlProviderFields({ kind, source, onSource, allowKeep, error }: {
  kind: SamlKind; source: SamlSource | 'keep'; onSource: (source: SamlSource | 'keep') => void; allowKeep: boolean; error: FormError | null;
}) {
  const { t } = useTranslation('sso');
  const fileId = useId();
  const [xml, setXml] = useState('');
  const [file, setFile] = useState<{ name: string; size: number } | 'unreadable' | null>(null);
  const sources: readonly (SamlSource | 'keep')[] = allowKeep ? ['keep', ...SAML_SOURCES] : SAML_SOURCES;
  return (
    <>
      <Choice
        legend={allowKeep ? t('connection.replaceIdp') : t('setup.samlSource')} name="samlSource" options={sources} value={source} onChange={onSource}
        label={(option) => (option === 'keep' ? t('connection.keepIdp') : t(`setup.sources.${option}`))}
      />
      {source !== 'keep' && <p className="hint">{t(`setup.whereMetadata.${kind}`)}</p>}
      {source === 'xml' && (
        <>
          <TextArea label={t('setup.metadataXml')} name="metadataXml" value={xml} onChange={setXml} error={error} rows={8} />
          <div className="field">
            <label htmlFor={fileId}>{t('setup.metadataFile')}</label>
            <input
              id={fileId} type="file" accept=".xml,application/xml,text/xml,application/samlmetadata+xml"
              onChange={(e) => {
                const chosen = e.target.files?.[0];
                if (!chosen) return;
                chosen.text().then(
                  (text) => {
                    setXml(text);
                    setFile({ name: chosen.name, size: text.length });
                  },
                  () => setFile('unreadable'),
                );
              }}
            />
            {file === 'unreadable' && <p className="field-error">{t('setup.fileUnreadable')}</p>}
            {file && file !== 'unreadable' && <p role="status" className="hint">{t('setup.fileRead', { name: file.name, size: file.size })}</p>}
          </div>
        </>
      )}
      {source === 'url' && <Field label={t('setup.metadataUrl')} name="metadataUrl" type="text" inputMode="text" placeholder="https://idp.example.com/metadata" hint={t('setup.metadataUrlHint')} error={error} />}
      {source === 'manual' && (
        <>
          <Field label={t('setup.entityId')} name="entityId" error={error} placeholder="https://idp.example.com/saml" />
          <Field label={t('setup.ssoUrl')} name="ssoUrl" error={error} placeholder="https://idp.example.com/sso" />
          <TextArea label={t('setup.certificate')} name="certificate" error={error} defaultValue="" />
        </>
      )}
    </>
  );
}

/** The SAML input of a form, by the chosen source; undefined to keep the stored provider. */
function samlFrom(form: FormData, source: SamlSource | 'keep'): SamlInput | undefined {
  if (source === 'keep') return undefined;
  if (source === 'xml') return { metadataXml: typeof form.get('metadataXml') === 'string' ? (form.get('metadataXml') as string).trim() : '' };
  if (source === 'url') return { metadataUrl: formValue(form, 'metadataUrl') ?? '' };
  return { entityId: formValue(form, 'entityId') ?? '', ssoUrl: formValue(form, 'ssoUrl') ?? '', certificate: formValue(form, 'certificate') ?? '' };
}

/** What enterprise SSO is for, shown while the workspace has no connection. */
function EmptyState() {
  const { t } = useTranslation('sso');
  return (
    <div className="empty-state">
      <p>{t('emptyWhat')}</p>
      <p>{t('emptyHow')}</p>
    </div>
  );
}

/**
 * `/app/{slug}/admin/sso`: the workspace's enterprise SSO connections (docs/sso.md): name, domains,
 * identity provider and creation date, each opening its page; "New connection" opens the guided setup.
 */
export function SsoConnectionsPage() {
  const { t } = useTranslation('sso');
  usePageTitle(t('title'));
  const slug = useSlug();
  const connections = useQuery({ queryKey: ['sso-connections', slug], queryFn: () => trpc.sso.list.query({ tenantSlug: slug }) });
  const items = connections.data?.items ?? [];
  return (
    <main className="page" id="main">
      <h1>{t('title')}</h1>
      <p>{t('intro')}</p>
      <p><Link to="/app/$slug/admin/sso/new" params={{ slug }} className="button-link">{t('newConnection')}</Link></p>
      <section aria-labelledby="sso-connection-list" className="panel">
        <h2 id="sso-connection-list">{t('list')}</h2>
        <ErrorAlert error={connections.error ? toFormError(connections.error) : null} />
        {connections.isSuccess && items.length === 0 && <EmptyState />}
        {items.length > 0 && (
          <div className="table-wrap">
            <table className="cards">
              <thead>
                <tr>
                  <th scope="col">{t('name')}</th><th scope="col">{t('domains')}</th><th scope="col">{t('identityProvider')}</th><th scope="col">{t('created')}</th>
                </tr>
              </thead>
              <tbody>
                {items.map((connection) => (
                  <tr key={connection.id}>
                    <td role="cell"><Link to="/app/$slug/admin/sso/$connectionId" params={{ slug, connectionId: connection.id }}>{connection.name}</Link></td>
                    <td role="cell" data-label={t('domains')} className="wrap">{connection.domains.join(', ')}</td>
                    <td role="cell" data-label={t('identityProvider')} className="mono wrap">
                      {t(`protocols.${connection.protocol}`)}: {connection.saml?.idpEntityId ?? connection.oidc?.issuer}
                    </td>
                    <td role="cell" data-label={t('created')}>{when(connection.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </main>
  );
}

/**
 * `/app/{slug}/admin/sso/new`: step 1 of the guided setup: the provider's kind and protocol, the
 * company (name, domains, organization and its roles, whether the provider asks for a second factor)
 * and the provider's values; creating opens the connection page (step 2) with the values to enter at
 * the provider under that provider's field names.
 */
export function NewSsoConnectionPage() {
  const { t } = useTranslation('sso');
  usePageTitle(t('setup.title'));
  const slug = useSlug();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [kind, setKind] = useState<SsoKind>('okta');
  const [protocol, setProtocol] = useState<Protocol>('saml');
  const [source, setSource] = useState<SamlSource | 'keep'>('xml');
  const preselected = (useSearch({ strict: false }) as { organizationId?: string }).organizationId;
  const [organizationId, setOrganizationId] = useState(preselected ?? '');
  const chooseKind = (next: SsoKind) => {
    setKind(next);
    if (!PROTOCOLS_OF[next].includes(protocol)) setProtocol(PROTOCOLS_OF[next][0]!);
  };
  const create = useMutation({
    mutationFn: (form: FormData) => {
      const common = {
        tenantSlug: slug,
        name: formValue(form, 'name') ?? '',
        domains: domainWords(formValue(form, 'domains')),
        organizationId: organizationId || null,
        defaultOrganizationRoles: organizationId ? checkedRoles(form) : [],
        providerPerformsMfa: form.get('providerPerformsMfa') === 'on',
      };
      return protocol === 'saml'
        ? trpc.sso.create.mutate({ ...common, protocol, signAuthnRequests: form.get('signAuthnRequests') === 'on', saml: samlFrom(form, source) })
        : trpc.sso.create.mutate({
          ...common, protocol, oidc: { issuer: formValue(form, 'issuer') ?? '', clientId: formValue(form, 'clientId') ?? '', clientSecret: formValue(form, 'clientSecret') ?? '' },
        });
    },
    onSuccess: async ({ connection }) => {
      await queryClient.invalidateQueries({ queryKey: ['sso-connections', slug] });
      justCreated.add(connection.id);
      await navigate({ to: '/app/$slug/admin/sso/$connectionId', params: { slug, connectionId: connection.id }, search: { setup: kind } });
    },
  });
  const error = changeError(create.error);
  return (
    <main className="page" id="main">
      <p><Link to="/app/$slug/admin/sso" params={{ slug }}>{t('backToList')}</Link></p>
      <h1>{t('setup.title')}</h1>
      <p>{t('setup.step1')}. {t('setup.step1Text')}</p>
      <form
        aria-label={t('setup.title')}
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate(new FormData(e.currentTarget));
        }}
      >
        <section aria-labelledby="sso-kind" className="panel">
          <h2 id="sso-kind">{t('setup.kind')}</h2>
          <Choice legend={t('identityProvider')} name="kind" options={SSO_KINDS} value={kind} onChange={chooseKind} label={(k) => t(`kinds.${k}`)} hint={(k) => t(`kindHints.${k}`)} />
          {PROTOCOLS_OF[kind].length > 1 && (
            <Choice legend={t('setup.protocol')} name="protocol" options={PROTOCOLS_OF[kind]} value={protocol} onChange={setProtocol} label={(p) => t(`protocols.${p}`)} />
          )}
        </section>
        <section aria-labelledby="sso-company" className="panel">
          <h2 id="sso-company">{t('setup.company')}</h2>
          <Field label={t('name')} name="name" required error={error} hint={t('setup.nameHint')} />
          <Field label={t('setup.domains')} name="domains" required error={error} hint={t('setup.domainsHint')} placeholder="acme.com acme.de" />
          <OrganizationPicker slug={slug} organizationId={organizationId} roles={[]} onChange={setOrganizationId} />
          <Checkbox label={t('setup.providerPerformsMfa')} name="providerPerformsMfa" />
          <p className="hint">{t('setup.providerPerformsMfaHint')}</p>
        </section>
        <section aria-labelledby="sso-provider" className="panel">
          <h2 id="sso-provider">{t('setup.provider')}</h2>
          <p className="hint">{t('setup.placeholderTip')}</p>
          {protocol === 'saml' && isSamlKind(kind) ? (
            <>
              <SamlProviderFields kind={kind} source={source} onSource={setSource} allowKeep={false} error={error} />
              <Checkbox key={kind} label={t('setup.signAuthnRequests')} name="signAuthnRequests" defaultChecked={kind === 'adfs'} />
              <p className="hint">{t('setup.signAuthnRequestsHint')}</p>
            </>
          ) : (
            <OidcProviderFields kind={isOidcKind(kind) ? kind : 'oidc'} error={error} />
          )}
        </section>
        <ChangeAlert error={error} slug={slug} />
        <button type="submit" disabled={create.isPending}>{t('setup.create')}</button>
      </form>
    </main>
  );
}

/** The OpenID provider's issuer and the client registered there; on a change the secret may be left empty to keep it. */
function OidcProviderFields({ kind, error, current }: { kind: OidcKind; error: FormError | null; current?: { issuer: string; clientId: string } }) {
  const { t } = useTranslation('sso');
  return (
    <>
      <Field label={t('setup.issuer')} name="issuer" required error={error} defaultValue={current?.issuer} placeholder={t(`setup.issuerExample.${kind}`)} />
      <Field label={t('setup.clientId')} name="clientId" required error={error} defaultValue={current?.clientId} autoComplete="off" />
      <Field
        label={current ? t('connection.newSecret') : t('setup.clientSecret')} name="clientSecret" type="password" autoComplete="new-password" required={!current} error={error}
        hint={current ? t('connection.newSecretHint') : t('setup.clientSecretHint')}
      />
    </>
  );
}

/** Days until `iso`, rounded down; negative once past. */
const daysUntil = (iso: string): number => Math.floor((new Date(iso).getTime() - Date.now()) / DAY_MS);

/**
 * What to enter at the identity provider (step 2 of the setup): the service-provider values under
 * the field names of the chosen provider (docs/sso.md "Setting up a provider"), each with a copy button.
 */
function ProviderInstructions({ connection, kind, onKind }: { connection: Connection; kind: SsoKind; onKind: (kind: SsoKind) => void }) {
  const { t } = useTranslation('sso');
  const selectId = useId();
  const sp = connection.sp;
  const kinds = SSO_KINDS.filter((k) => PROTOCOLS_OF[k].includes(connection.protocol));
  const names = t(`connection.spFields.${kind}`, { returnObjects: true });
  return (
    <section aria-labelledby="sso-at-provider" className="panel">
      <h2 id="sso-at-provider">{t('connection.atProvider')}</h2>
      <div className="field">
        <label htmlFor={selectId}>{t('connection.instructionsFor')}</label>
        <select id={selectId} value={kind} onChange={(e) => onKind(e.target.value as SsoKind)}>
          {kinds.map((k) => <option key={k} value={k}>{t(`kinds.${k}`)}</option>)}
        </select>
      </div>
      {'acsUrl' in sp ? (
        <>
          {isSamlKind(kind) && <p>{t(`connection.samlSteps.${kind}`)}</p>}
          <CopyField id={`sp-acs-${connection.id}`} label={names.acsUrl} value={sp.acsUrl} />
          <CopyField id={`sp-entity-${connection.id}`} label={names.entityId} value={sp.entityId} />
          <CopyField id={`sp-metadata-${connection.id}`} label={t('connection.spMetadataUrl')} value={sp.metadataUrl} />
          <CopyBlock label={t('connection.spCertificate')} value={sp.certificate} hint={t('connection.spCertificateHint')} />
          <p className="muted">{sp.signAuthnRequests ? t('connection.signedRequests') : t('connection.unsignedRequests')}</p>
        </>
      ) : (
        <>
          {isOidcKind(kind) && <p>{t(`connection.oidcSteps.${kind}`)}</p>}
          <CopyField id={`sp-redirect-${connection.id}`} label={names.redirectUri} value={sp.redirectUri} />
        </>
      )}
    </section>
  );
}

/** The identity provider as stored: SAML entity id, SSO URL and signing certificates (expiry warned about), or the OpenID issuer and client. */
function ProviderFacts({ connection }: { connection: Connection }) {
  const { t } = useTranslation('sso');
  const { saml, oidc } = connection;
  const expiring = saml?.certificates.some((cert) => daysUntil(cert.notAfter) <= CERTIFICATE_WARNING_DAYS) ?? false;
  return (
    <section aria-labelledby="sso-idp" className="panel">
      <h2 id="sso-idp">{t('connection.idp')}</h2>
      <dl className="facts">
        <dt>{t('protocol')}</dt><dd>{t(`protocols.${connection.protocol}`)}</dd>
        <dt>{t('domains')}</dt><dd>{connection.domains.join(', ')}</dd>
        {saml && (
          <>
            <dt>{t('connection.entityId')}</dt><dd className="mono">{saml.idpEntityId}</dd>
            <dt>{t('connection.ssoUrl')}</dt><dd className="mono">{saml.ssoUrl}</dd>
            {saml.metadataUrl && (<><dt>{t('connection.metadataUrl')}</dt><dd className="mono">{saml.metadataUrl}</dd></>)}
          </>
        )}
        {oidc && (
          <>
            <dt>{t('connection.oidcIssuer')}</dt><dd className="mono">{oidc.issuer}</dd>
            <dt>{t('connection.clientId')}</dt><dd className="mono">{oidc.clientId}</dd>
          </>
        )}
      </dl>
      {saml && (
        <>
          <h3>{t('connection.certificates')}</h3>
          {expiring && <div role="alert" className="alert">{t('connection.certificateWarning')}</div>}
          <div className="table-wrap">
            <table className="cards">
              <thead>
                <tr><th scope="col">{t('connection.certSubject')}</th><th scope="col">{t('connection.certExpires')}</th><th scope="col">{t('connection.certFingerprint')}</th></tr>
              </thead>
              <tbody>
                {saml.certificates.map((cert) => {
                  const days = daysUntil(cert.notAfter);
                  return (
                    <tr key={cert.fingerprintSha256}>
                      <td role="cell" className="wrap">{cert.subject}</td>
                      <td role="cell" data-label={t('connection.certExpires')}>
                        {when(cert.notAfter)}{' '}
                        {days <= CERTIFICATE_WARNING_DAYS && (
                          <span className="badge warning">{days < 0 ? t('connection.expired') : t('connection.expiresSoon', { count: days })}</span>
                        )}
                      </td>
                      <td role="cell" data-label={t('connection.certFingerprint')} className="mono wrap">{cert.fingerprintSha256}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

/** What the identity provider sent in a test: address, subject, name, issuer, authentication context and every attribute. */
function TestResultFacts({ result }: { result: TestResult }) {
  const { t } = useTranslation('sso');
  const attributes = Object.entries(result.attributes);
  return (
    <>
      <h3>{t('connection.whatSent')}</h3>
      <dl className="facts">
        <dt>{t('connection.email')}</dt><dd>{result.email}</dd>
        <dt>{t('connection.subject')}</dt><dd className="mono">{result.subject}</dd>
        <dt>{t('connection.personName')}</dt><dd>{result.name ?? '—'}</dd>
        <dt>{t('connection.issuer')}</dt><dd className="mono">{result.issuer}</dd>
        <dt>{t('connection.authnContext')}</dt><dd className="mono">{result.authnContext ?? '—'}</dd>
      </dl>
      {attributes.length === 0 ? (
        <p className="muted">{t('connection.noAttributes')}</p>
      ) : (
        <div className="table-wrap">
          <table className="cards" aria-label={t('connection.attributes')}>
            <thead>
              <tr><th scope="col">{t('connection.attribute')}</th><th scope="col">{t('connection.values')}</th></tr>
            </thead>
            <tbody>
              {attributes.map(([name, values]) => (
                <tr key={name}>
                  <td role="cell" className="mono wrap">{name}</td>
                  <td role="cell" data-label={t('connection.values')} className="wrap">{values.join(', ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/**
 * "Test this connection": starts a test sign-in at the provider (`sso.test`, the browser goes there);
 * back on this page with `#code=…` it shows what the provider sent (`sso.testResult`, once; the
 * fragment is removed from the address bar first), with `#error=<reason>` the refusal in words.
 */
function TestSection({ slug, connectionId }: { slug: string; connectionId: string }) {
  const { t } = useTranslation('sso');
  const [fragment] = useState(() => new URLSearchParams(window.location.hash.replace(/^#/, '')));
  const code = fragment.get('code');
  const refused = fragment.get('error');
  const asked = useRef(false);
  const result = useMutation({ mutationFn: (testCode: string) => trpc.sso.testResult.mutate({ tenantSlug: slug, code: testCode }) });
  const start = useMutation({
    mutationFn: () => trpc.sso.test.mutate({ tenantSlug: slug, id: connectionId }),
    onSuccess: ({ redirectUrl }) => window.location.assign(redirectUrl),
  });
  useEffect(() => {
    if (window.location.hash) window.history.replaceState(window.history.state, '', window.location.pathname + window.location.search);
    if (asked.current || !code) return;
    asked.current = true;
    result.mutate(code);
  }, [code, result]);
  const failure = result.error ? toFormError(result.error) : refused ? reasonAsFormError(refused) : null;
  return (
    <section aria-labelledby="sso-test" className="panel">
      <h2 id="sso-test">{t('connection.testTitle')}</h2>
      {result.isPending && <p role="status">{t('connection.testing')}</p>}
      {failure && (
        <div role="alert" className="alert">
          <strong>{t('connection.testFailed')}</strong> {failure.message}
        </div>
      )}
      {result.data && (
        <>
          <Notice>{t('connection.testPassed')}</Notice>
          <TestResultFacts result={result.data} />
        </>
      )}
      <p className="hint">{t('connection.testHint')}</p>
      <ErrorAlert error={start.error ? toFormError(start.error) : null} />
      <button type="button" onClick={() => start.mutate()} disabled={start.isPending}>{t('connection.test')}</button>
    </section>
  );
}

/** The latest responses the provider's sign-ins were refused for (time, reason in words, message). */
function RecentFailures({ failures }: { failures: RouterOutputs['sso']['get']['recentFailures'] }) {
  const { t } = useTranslation('sso');
  return (
    <section aria-labelledby="sso-failures" className="panel">
      <h2 id="sso-failures">{t('connection.failures')}</h2>
      {failures.length === 0 ? (
        <p className="muted">{t('connection.noFailures')}</p>
      ) : (
        <div className="table-wrap">
          <table className="cards">
            <thead>
              <tr><th scope="col">{t('connection.failureTime')}</th><th scope="col">{t('connection.failureReason')}</th><th scope="col">{t('connection.failureMessage')}</th></tr>
            </thead>
            <tbody>
              {failures.map((failure, index) => (
                <tr key={`${failure.at} ${index}`}>
                  <td role="cell">{when(failure.at)}</td>
                  <td role="cell" data-label={t('connection.failureReason')}>{reasonAsFormError(failure.reason).message}</td>
                  <td role="cell" data-label={t('connection.failureMessage')} className="wrap">{failure.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** Changing a connection: name, domains, organization and roles, the MFA flag, signed requests, the provider's values. */
function EditConnection({ slug, connection, kind, onSaved }: { slug: string; connection: Connection; kind: SsoKind; onSaved: (message: string) => void }) {
  const { t } = useTranslation('sso');
  const queryClient = useQueryClient();
  const [source, setSource] = useState<SamlSource | 'keep'>('keep');
  const [organizationId, setOrganizationId] = useState(connection.organizationId ?? '');
  const update = useMutation({
    mutationFn: (form: FormData) => {
      const issuer = formValue(form, 'issuer');
      const clientId = formValue(form, 'clientId');
      const clientSecret = formValue(form, 'clientSecret');
      const oidcChanged = connection.oidc && (issuer !== connection.oidc.issuer || clientId !== connection.oidc.clientId || clientSecret !== undefined);
      return trpc.sso.update.mutate({
        tenantSlug: slug,
        id: connection.id,
        name: formValue(form, 'name'),
        domains: domainWords(formValue(form, 'domains')),
        organizationId: organizationId || null,
        defaultOrganizationRoles: organizationId ? checkedRoles(form) : [],
        providerPerformsMfa: form.get('providerPerformsMfa') === 'on',
        ...(connection.protocol === 'saml' ? { signAuthnRequests: form.get('signAuthnRequests') === 'on', saml: samlFrom(form, source) } : {}),
        ...(oidcChanged ? { oidc: { issuer: issuer ?? '', clientId: clientId ?? '', ...(clientSecret ? { clientSecret } : {}) } } : {}),
      });
    },
    onSuccess: async (data) => {
      queryClient.setQueryData(['sso-connection', slug, connection.id], (old: RouterOutputs['sso']['get'] | undefined) => old && { ...old, connection: data.connection });
      setSource('keep');
      onSaved(t('connection.saved'));
      await queryClient.invalidateQueries({ queryKey: ['sso-connections', slug] });
    },
  });
  const error = changeError(update.error);
  return (
    <section aria-labelledby="sso-edit" className="panel">
      <h2 id="sso-edit">{t('connection.edit')}</h2>
      <form
        key={connection.updatedAt}
        aria-labelledby="sso-edit"
        onSubmit={(e) => {
          e.preventDefault();
          update.mutate(new FormData(e.currentTarget));
        }}
      >
        <Field label={t('name')} name="name" required defaultValue={connection.name} error={error} />
        <Field label={t('setup.domains')} name="domains" required defaultValue={connection.domains.join(' ')} error={error} hint={t('setup.domainsHint')} />
        <OrganizationPicker slug={slug} organizationId={organizationId} roles={connection.defaultOrganizationRoles} onChange={setOrganizationId} />
        <Checkbox label={t('setup.providerPerformsMfa')} name="providerPerformsMfa" defaultChecked={connection.providerPerformsMfa} />
        <p className="hint">{t('setup.providerPerformsMfaHint')}</p>
        {'acsUrl' in connection.sp && (
          <>
            <Checkbox label={t('setup.signAuthnRequests')} name="signAuthnRequests" defaultChecked={connection.sp.signAuthnRequests} />
            <p className="hint">{t('setup.signAuthnRequestsHint')}</p>
          </>
        )}
        {connection.protocol === 'saml' ? (
          <SamlProviderFields kind={isSamlKind(kind) ? kind : 'saml'} source={source} onSource={setSource} allowKeep error={error} />
        ) : (
          <OidcProviderFields kind={isOidcKind(kind) ? kind : 'oidc'} error={error} current={connection.oidc ?? undefined} />
        )}
        <ChangeAlert error={error} slug={slug} />
        <button type="submit" disabled={update.isPending}>{t('connection.save')}</button>
      </form>
    </section>
  );
}

/** Deleting the connection after a confirmation; its people keep their accounts. */
function DeleteConnection({ slug, connection }: { slug: string; connection: Connection }) {
  const { t } = useTranslation('sso');
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const remove = useMutation({
    mutationFn: () => trpc.sso.delete.mutate({ tenantSlug: slug, id: connection.id }),
    onSuccess: async () => {
      queryClient.removeQueries({ queryKey: ['sso-connection', slug, connection.id] });
      await queryClient.invalidateQueries({ queryKey: ['sso-connections', slug] });
      await navigate({ to: '/app/$slug/admin/sso', params: { slug } });
    },
  });
  const confirm = useConfirm();
  return (
    <section aria-labelledby="sso-delete" className="panel danger">
      <h2 id="sso-delete">{t('connection.danger')}</h2>
      <p>{t('connection.dangerText')}</p>
      <ChangeAlert error={remove.error ? toFormError(remove.error) : null} slug={slug} />
      <button
        type="button" className="danger" disabled={remove.isPending}
        onClick={() => void confirm({ message: t('connection.deleteConfirm', { name: connection.name }), confirmLabel: t('connection.deleteConfirmButton') }).then((ok) => ok && remove.mutate())}
      >
        {t('connection.delete', { name: connection.name })}
      </button>
    </section>
  );
}

/**
 * `/app/{slug}/admin/sso/{connectionId}`: one connection (step 2 of the setup after creation): the
 * values to enter at the provider, the test, the provider as stored, the latest refused sign-ins,
 * changes and deletion (docs/sso.md, docs/web.md "Enterprise SSO").
 */
export function SsoConnectionPage() {
  const { t } = useTranslation('sso');
  const slug = useSlug();
  const { connectionId } = useParams({ from: '/app/$slug/signed-in/admin/sso/$connectionId' });
  const { setup } = useSearch({ from: '/app/$slug/signed-in/admin/sso/$connectionId' });
  const [created] = useState(() => justCreated.has(connectionId));
  useEffect(() => {
    justCreated.delete(connectionId);
  }, [connectionId]);
  const [chosenKind, setKind] = useState<SsoKind | undefined>(setup);
  const [saved, setSaved] = useState<string | null>(null);
  const query = useQuery({ queryKey: ['sso-connection', slug, connectionId], queryFn: () => trpc.sso.get.query({ tenantSlug: slug, id: connectionId }) });
  const connection = query.data?.connection;
  usePageTitle(connection?.name ?? t('connection.title'));
  const kind = connection && chosenKind && PROTOCOLS_OF[chosenKind].includes(connection.protocol) ? chosenKind : fallbackKind(connection?.protocol ?? 'saml');
  let body: ReactNode = null;
  if (connection && query.data) {
    body = (
      <>
        {created && <Notice>{t('connection.created')}</Notice>}
        {saved && <Notice>{saved}</Notice>}
        <ProviderInstructions connection={connection} kind={kind} onKind={setKind} />
        <TestSection slug={slug} connectionId={connection.id} />
        <ProviderFacts connection={connection} />
        <RecentFailures failures={query.data.recentFailures} />
        <EditConnection slug={slug} connection={connection} kind={kind} onSaved={setSaved} />
        <DeleteConnection slug={slug} connection={connection} />
      </>
    );
  }
  return (
    <main className="page" id="main">
      <p><Link to="/app/$slug/admin/sso" params={{ slug }}>{t('backToList')}</Link></p>
      <h1>{connection?.name ?? t('connection.title')}</h1>
      <ErrorAlert error={query.error ? toFormError(query.error) : null} />
      {body}
    </main>
  );
}
