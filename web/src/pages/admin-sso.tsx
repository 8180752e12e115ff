import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { reasonAsFormError, toFormError, trpc, type RouterOutputs } from '../api';
import { when } from '../audit-format';
import { usePageTitle, useSlug } from '../hooks';
import { ErrorAlert, Field, formValue, Notice } from '../ui';
import { CopyField } from './admin-applications';

type Connection = RouterOutputs['sso']['list']['items'][number];
type TestResult = RouterOutputs['sso']['testResult'];

/** The identity providers the guided setup knows, with the protocols each speaks (docs/sso.md "Setting up a provider"). */
const PROVIDER_KINDS = {
  okta: ['saml', 'oidc'],
  entra: ['saml', 'oidc'],
  google: ['saml', 'oidc'],
  adfs: ['saml'],
  saml: ['saml'],
  oidc: ['oidc'],
} as const satisfies Record<string, readonly ('saml' | 'oidc')[]>;
type ProviderKind = keyof typeof PROVIDER_KINDS;
type Protocol = 'saml' | 'oidc';

/** Days before a certificate's end when the page warns. */
const CERTIFICATE_WARNING_DAYS = 30;

/** Domains typed in one field, separated by spaces or commas, lower-cased. */
const domainWords = (text: string | undefined): string[] => [...new Set((text ?? '').toLowerCase().split(/[\s,]+/).filter(Boolean))];

/** How the identity provider is given in a form: metadata (pasted, uploaded or by URL) or typed values. */
function samlInputOf(form: FormData, uploaded: string | null) {
  const metadataUrl = formValue(form, 'metadataUrl');
  const metadataXml = uploaded ?? formValue(form, 'metadataXml');
  if (metadataXml) return { metadataXml };
  if (metadataUrl) return { metadataUrl };
  return { entityId: formValue(form, 'entityId') ?? '', ssoUrl: formValue(form, 'ssoUrl') ?? '', certificate: formValue(form, 'certificate') ?? '' };
}

/** The SAML identity-provider fields: metadata XML (pasted or from a file), a metadata URL, or the three values. */
function SamlProviderFields({ error, onFile, required }: { error: ReturnType<typeof toFormError> | null; onFile: (xml: string | null) => void; required: boolean }) {
  const { t } = useTranslation('admin');
  const fileId = useId();
  return (
    <fieldset>
      <legend>{t('sso.samlProvider')}</legend>
      <p className="hint">{t('sso.samlProviderHint')}</p>
      <div className="field">
        <label htmlFor={fileId}>{t('sso.metadataFile')}</label>
        <input
          id={fileId} type="file" accept=".xml,application/xml,text/xml,application/samlmetadata+xml"
          onChange={(e) => {
            const file = e.currentTarget.files?.[0];
            if (!file) return onFile(null);
            void file.text().then(onFile);
          }}
        />
      </div>
      <div className="field">
        <label htmlFor={`${fileId}-xml`}>{t('sso.metadataXml')}</label>
        <textarea id={`${fileId}-xml`} name="metadataXml" rows={4} className="mono" />
      </div>
      <Field label={t('sso.metadataUrl')} name="metadataUrl" error={error} />
      <details>
        <summary>{t('sso.typeValues')}</summary>
        <Field label={t('sso.idpEntityId')} name="entityId" error={error} required={false} />
        <Field label={t('sso.ssoUrl')} name="ssoUrl" error={error} />
        <div className="field">
          <label htmlFor={`${fileId}-cert`}>{t('sso.certificate')}</label>
          <textarea id={`${fileId}-cert`} name="certificate" rows={4} className="mono" />
        </div>
      </details>
      {required && <p className="hint">{t('sso.oneOfThem')}</p>}
    </fieldset>
  );
}

/** The OpenID Connect provider fields: issuer, client id and client secret (never shown again). */
function OidcProviderFields({ error, secretRequired }: { error: ReturnType<typeof toFormError> | null; secretRequired: boolean }) {
  const { t } = useTranslation('admin');
  return (
    <fieldset>
      <legend>{t('sso.oidcProvider')}</legend>
      <Field label={t('sso.issuer')} name="issuer" required error={error} hint={t('sso.issuerHint')} />
      <Field label={t('sso.clientId')} name="clientId" required error={error} />
      <Field
        label={t('sso.clientSecret')} name="clientSecret" type="password" autoComplete="off" required={secretRequired} error={error}
        hint={secretRequired ? undefined : t('sso.clientSecretKeep')}
      />
    </fieldset>
  );
}

/**
 * `/app/{slug}/admin/sso`: the workspace's enterprise SSO connections (docs/sso.md) and a guided
 * setup per provider kind: name, domains, the provider by SAML metadata or OpenID issuer and client.
 * Creating one leads to its page, which shows the values to enter at the provider.
 */
export function SsoConnectionsPage() {
  const { t } = useTranslation('admin');
  usePageTitle(t('sso.title'));
  const slug = useSlug();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const kindId = useId();
  const protocolId = useId();
  const [kind, setKind] = useState<ProviderKind>('okta');
  const [protocol, setProtocol] = useState<Protocol>('saml');
  const [uploaded, setUploaded] = useState<string | null>(null);
  const connections = useQuery({ queryKey: ['sso-connections', slug], queryFn: () => trpc.sso.list.query({ tenantSlug: slug }) });
  const protocols: readonly Protocol[] = PROVIDER_KINDS[kind];
  const chosen: Protocol = protocols.includes(protocol) ? protocol : protocols[0]!;
  const create = useMutation({
    mutationFn: (form: FormData) => {
      const common = {
        tenantSlug: slug, name: formValue(form, 'name') ?? '', domains: domainWords(formValue(form, 'domains')),
        providerPerformsMfa: form.get('providerPerformsMfa') === 'on', signAuthnRequests: form.get('signAuthnRequests') === 'on',
      };
      return chosen === 'saml'
        ? trpc.sso.create.mutate({ ...common, protocol: 'saml', saml: samlInputOf(form, uploaded) })
        : trpc.sso.create.mutate({
          ...common, protocol: 'oidc',
          oidc: { issuer: formValue(form, 'issuer') ?? '', clientId: formValue(form, 'clientId') ?? '', clientSecret: formValue(form, 'clientSecret') ?? '' },
        });
    },
    onSuccess: async (data) => {
      await queryClient.invalidateQueries({ queryKey: ['sso-connections', slug] });
      await navigate({ to: '/app/$slug/admin/sso/$connectionId', params: { slug, connectionId: data.connection.id } });
    },
  });
  const createError = create.error ? toFormError(create.error) : null;
  const items = connections.data?.items ?? [];
  return (
    <main className="page sso-page" id="main">
      <h1>{t('sso.title')}</h1>
      <p>{t('sso.intro')}</p>
      <section aria-labelledby="sso-list" className="panel">
        <h2 id="sso-list">{t('sso.list')}</h2>
        <ErrorAlert error={connections.error ? toFormError(connections.error) : null} />
        {connections.isSuccess && items.length === 0 ? (
          <div className="empty-state">
            <p>{t('sso.emptyWhat')}</p>
            <p>{t('sso.emptyHow')}</p>
          </div>
        ) : (
          <div className="table-wrap">
            <table className="cards">
              <thead>
                <tr><th scope="col">{t('sso.name')}</th><th scope="col">{t('sso.domains')}</th><th scope="col">{t('sso.provider')}</th><th scope="col">{t('sso.created')}</th></tr>
              </thead>
              <tbody>
                {items.map((connection) => (
                  <tr key={connection.id}>
                    <td role="cell"><Link to="/app/$slug/admin/sso/$connectionId" params={{ slug, connectionId: connection.id }}>{connection.name}</Link></td>
                    <td role="cell" data-label={t('sso.domains')}>{connection.domains.join(', ')}</td>
                    <td role="cell" data-label={t('sso.provider')} className="mono">{providerOf(connection)}</td>
                    <td role="cell" data-label={t('sso.created')}>{when(connection.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section aria-labelledby="sso-new" className="panel">
        <h2 id="sso-new">{t('sso.add')}</h2>
        <p className="hint">{t('sso.addHint')}</p>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate(new FormData(e.currentTarget));
          }}
        >
          <ErrorAlert error={createError} />
          <div className="field">
            <label htmlFor={kindId}>{t('sso.kind')}</label>
            <select id={kindId} value={kind} onChange={(e) => setKind(e.target.value as ProviderKind)}>
              {(Object.keys(PROVIDER_KINDS) as ProviderKind[]).map((value) => <option key={value} value={value}>{t(`sso.kinds.${value}`)}</option>)}
            </select>
          </div>
          {protocols.length > 1 && (
            <div className="field">
              <label htmlFor={protocolId}>{t('sso.protocol')}</label>
              <select id={protocolId} value={chosen} onChange={(e) => setProtocol(e.target.value as Protocol)}>
                {protocols.map((value) => <option key={value} value={value}>{t(`sso.protocols.${value}`)}</option>)}
              </select>
            </div>
          )}
          <p className="hint">{t(`sso.guide.${kind}`)}</p>
          <Field label={t('sso.name')} name="name" required error={createError} />
          <Field label={t('sso.domains')} name="domains" required error={createError} hint={t('sso.domainsHint')} placeholder="acme.com acme.de" />
          {chosen === 'saml' ? <SamlProviderFields error={createError} onFile={setUploaded} required /> : <OidcProviderFields error={createError} secretRequired />}
          <div className="field checkbox">
            <input id={`${kindId}-mfa`} type="checkbox" name="providerPerformsMfa" />
            <label htmlFor={`${kindId}-mfa`}>{t('sso.providerPerformsMfa')}</label>
          </div>
          {chosen === 'saml' && (
            <div className="field checkbox">
              <input id={`${kindId}-sign`} type="checkbox" name="signAuthnRequests" />
              <label htmlFor={`${kindId}-sign`}>{t('sso.signAuthnRequests')}</label>
            </div>
          )}
          <button type="submit" disabled={create.isPending}>{t('sso.addButton')}</button>
        </form>
      </section>
    </main>
  );
}

/** What a list names a connection's provider by: the SAML entity id or the OpenID issuer. */
function providerOf(connection: Connection): string {
  return connection.saml?.idpEntityId ?? connection.oidc?.issuer ?? '';
}

/** Whole days until `iso`, negative once past. */
function daysUntil(iso: string): number {
  return Math.floor((new Date(iso).getTime() - Date.now()) / 86_400_000);
}

/** What the IdP sent in a test: the person and every attribute, in a table. */
function TestResultPanel({ result }: { result: TestResult }) {
  const { t } = useTranslation('admin');
  return (
    <section aria-labelledby="sso-test-result" className="panel">
      <h2 id="sso-test-result">{t('sso.testResult')}</h2>
      <Notice>{t('sso.testSucceeded')}</Notice>
      <div className="table-wrap">
        <table>
          <tbody>
            <tr><th scope="row">{t('sso.email')}</th><td>{result.email}</td></tr>
            <tr><th scope="row">{t('sso.subject')}</th><td className="mono">{result.subject}</td></tr>
            <tr><th scope="row">{t('sso.personName')}</th><td>{result.name ?? '—'}</td></tr>
            <tr><th scope="row">{t('sso.authnContext')}</th><td className="mono">{result.authnContext ?? '—'}</td></tr>
            {Object.entries(result.attributes).map(([name, values]) => (
              <tr key={name}><th scope="row" className="mono">{name}</th><td>{values.join(', ')}</td></tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/**
 * `/app/{slug}/admin/sso/{id}`: one connection (docs/sso.md): the values to enter at the provider,
 * the provider's values with its certificates, "Test this connection" (the IdP's answer comes back
 * here as `#code=…` or `#error=<reason>`), the latest refused sign-ins, changes and deletion.
 */
export function SsoConnectionPage() {
  const { t } = useTranslation('admin');
  usePageTitle(t('sso.connectionTitle'));
  const slug = useSlug();
  const { connectionId } = useParams({ strict: false }) as { connectionId: string };
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [notice, setNotice] = useState<string | null>(null);
  const [uploaded, setUploaded] = useState<string | null>(null);
  const [fragment] = useState(() => new URLSearchParams(window.location.hash.replace(/^#/, '')));
  const testCode = fragment.get('code');
  const testRefusal = fragment.get('error');
  const started = useRef(false);
  const read = useQuery({ queryKey: ['sso-connection', slug, connectionId], queryFn: () => trpc.sso.get.query({ tenantSlug: slug, id: connectionId }) });
  const result = useMutation({ mutationFn: (code: string) => trpc.sso.testResult.mutate({ tenantSlug: slug, code }) });
  useEffect(() => {
    if (window.location.hash) window.history.replaceState(window.history.state, '', window.location.pathname);
    if (started.current || !testCode) return;
    started.current = true;
    result.mutate(testCode);
  }, [result, testCode]);
  const test = useMutation({
    mutationFn: () => trpc.sso.test.mutate({ tenantSlug: slug, id: connectionId }),
    onSuccess: ({ redirectUrl }) => window.location.assign(redirectUrl),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['sso-connection', slug, connectionId] });
  const save = useMutation({
    mutationFn: (form: FormData) => {
      const connection = read.data!.connection;
      const replaceProvider = connection.protocol === 'saml'
        ? (uploaded || formValue(form, 'metadataXml') || formValue(form, 'metadataUrl') || formValue(form, 'entityId')) ? { saml: samlInputOf(form, uploaded) } : {}
        : formValue(form, 'issuer')
          ? { oidc: { issuer: formValue(form, 'issuer') ?? '', clientId: formValue(form, 'clientId') ?? '', clientSecret: formValue(form, 'clientSecret') } }
          : {};
      return trpc.sso.update.mutate({
        tenantSlug: slug, id: connectionId, name: formValue(form, 'name'), domains: domainWords(formValue(form, 'domains')),
        providerPerformsMfa: form.get('providerPerformsMfa') === 'on',
        ...(connection.protocol === 'saml' ? { signAuthnRequests: form.get('signAuthnRequests') === 'on' } : {}),
        ...replaceProvider,
      });
    },
    onSuccess: async () => {
      await refresh();
      await queryClient.invalidateQueries({ queryKey: ['sso-connections', slug] });
      setNotice(t('sso.saved'));
    },
  });
  const remove = useMutation({
    mutationFn: () => trpc.sso.delete.mutate({ tenantSlug: slug, id: connectionId }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['sso-connections', slug] });
      await navigate({ to: '/app/$slug/admin/sso', params: { slug } });
    },
  });
  const error = read.error ?? test.error ?? remove.error;
  const saveError = save.error ? toFormError(save.error) : null;
  const testError = result.error ? toFormError(result.error) : testRefusal ? reasonAsFormError(testRefusal) : null;
  const connection = read.data?.connection;
  return (
    <main className="page sso-page" id="main">
      <p><Link to="/app/$slug/admin/sso" params={{ slug }}>{t('sso.back')}</Link></p>
      <h1>{connection?.name ?? t('sso.connectionTitle')}</h1>
      <ErrorAlert error={error ? toFormError(error) : null} />
      {notice && <Notice>{notice}</Notice>}
      {testError && (
        <section aria-labelledby="sso-test-failed" className="panel">
          <h2 id="sso-test-failed">{t('sso.testFailed')}</h2>
          <ErrorAlert error={testError} />
        </section>
      )}
      {result.data && <TestResultPanel result={result.data} />}
      {connection && (
        <>
          <section aria-labelledby="sso-sp" className="panel">
            <h2 id="sso-sp">{t('sso.enterAtProvider')}</h2>
            {'redirectUri' in connection.sp ? (
              <CopyField id="sso-redirect-uri" label={t('sso.redirectUri')} value={connection.sp.redirectUri} />
            ) : (
              <>
                <CopyField id="sso-entity-id" label={t('sso.spEntityId')} value={connection.sp.entityId} />
                <CopyField id="sso-acs-url" label={t('sso.acsUrl')} value={connection.sp.acsUrl} />
                <CopyField id="sso-metadata-url" label={t('sso.spMetadataUrl')} value={connection.sp.metadataUrl} />
                <details>
                  <summary>{t('sso.spCertificate')}</summary>
                  <pre className="mono">{connection.sp.certificate}</pre>
                </details>
              </>
            )}
            <p>
              <button type="button" onClick={() => test.mutate()} disabled={test.isPending || test.isSuccess}>{t('sso.test')}</button>
            </p>
            <p className="hint">{t('sso.testHint')}</p>
          </section>
          <section aria-labelledby="sso-idp" className="panel">
            <h2 id="sso-idp">{t('sso.provider')}</h2>
            {connection.saml && (
              <dl>
                <dt>{t('sso.idpEntityId')}</dt><dd className="mono">{connection.saml.idpEntityId}</dd>
                <dt>{t('sso.ssoUrl')}</dt><dd className="mono">{connection.saml.ssoUrl}</dd>
                {connection.saml.metadataUrl && (<><dt>{t('sso.metadataUrl')}</dt><dd className="mono">{connection.saml.metadataUrl}</dd></>)}
              </dl>
            )}
            {connection.saml?.certificates.map((certificate) => {
              const days = daysUntil(certificate.notAfter);
              return (
                <div key={certificate.fingerprintSha256} className="certificate">
                  <p className="mono">{certificate.subject}</p>
                  <p className="hint mono">{certificate.fingerprintSha256}</p>
                  <p className={days < CERTIFICATE_WARNING_DAYS ? 'alert' : 'hint'} role={days < CERTIFICATE_WARNING_DAYS ? 'alert' : undefined}>
                    {days < 0 ? t('sso.certificateExpired', { date: when(certificate.notAfter) }) : t('sso.certificateValid', { date: when(certificate.notAfter), count: days })}
                  </p>
                </div>
              );
            })}
            {connection.oidc && (
              <dl>
                <dt>{t('sso.issuer')}</dt><dd className="mono">{connection.oidc.issuer}</dd>
                <dt>{t('sso.clientId')}</dt><dd className="mono">{connection.oidc.clientId}</dd>
              </dl>
            )}
          </section>
          <section aria-labelledby="sso-failures" className="panel">
            <h2 id="sso-failures">{t('sso.failures')}</h2>
            {(read.data?.recentFailures ?? []).length === 0 ? (
              <p className="muted">{t('sso.noFailures')}</p>
            ) : (
              <ul>
                {(read.data?.recentFailures ?? []).map((failure, i) => (
                  <li key={`${failure.at}-${i}`}>
                    {when(failure.at)}: {reasonAsFormError(failure.reason).message} <span className="hint">({failure.message})</span>
                  </li>
                ))}
              </ul>
            )}
          </section>
          <section aria-labelledby="sso-edit" className="panel">
            <h2 id="sso-edit">{t('sso.edit')}</h2>
            <form
              key={connection.updatedAt}
              onSubmit={(e) => {
                e.preventDefault();
                setNotice(null);
                save.mutate(new FormData(e.currentTarget));
              }}
            >
              <ErrorAlert error={saveError} />
              <Field label={t('sso.name')} name="name" required defaultValue={connection.name} error={saveError} />
              <Field label={t('sso.domains')} name="domains" required defaultValue={connection.domains.join(' ')} error={saveError} hint={t('sso.domainsHint')} />
              <div className="field checkbox">
                <input id="sso-edit-mfa" type="checkbox" name="providerPerformsMfa" defaultChecked={connection.providerPerformsMfa} />
                <label htmlFor="sso-edit-mfa">{t('sso.providerPerformsMfa')}</label>
              </div>
              {'signAuthnRequests' in connection.sp && (
                <div className="field checkbox">
                  <input id="sso-edit-sign" type="checkbox" name="signAuthnRequests" defaultChecked={connection.sp.signAuthnRequests} />
                  <label htmlFor="sso-edit-sign">{t('sso.signAuthnRequests')}</label>
                </div>
              )}
              <details>
                <summary>{t('sso.replaceProvider')}</summary>
                {connection.protocol === 'saml' ? <SamlProviderFields error={saveError} onFile={setUploaded} required={false} /> : <OidcProviderFields error={saveError} secretRequired={false} />}
              </details>
              <button type="submit" disabled={save.isPending}>{t('sso.save')}</button>
            </form>
          </section>
          <section aria-labelledby="sso-delete" className="panel danger">
            <h2 id="sso-delete">{t('sso.delete')}</h2>
            <p>{t('sso.deleteHint')}</p>
            <button
              type="button" className="danger" disabled={remove.isPending}
              onClick={() => {
                if (window.confirm(t('sso.deleteConfirm', { name: connection.name }))) remove.mutate();
              }}
            >
              {t('sso.deleteButton')}
            </button>
          </section>
        </>
      )}
    </main>
  );
}
