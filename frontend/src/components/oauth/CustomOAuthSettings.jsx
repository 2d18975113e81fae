import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useSWR from 'swr';
import {
  createProvider, deleteProvider, discoverProvider, listProviders, updateProvider,
} from '../../api/customOAuth';
import useSubmit from '../../hooks/useSubmit';
import { SelectInput, Switch, TextInput } from '../Field';
import Modal, { ConfirmModal } from '../Modal';

const EMPTY = {
  name: '', slug: '', enabled: true, client_id: '', client_secret: '', issuer: '', authorization_endpoint: '',
  token_endpoint: '', user_info_endpoint: '', jwks_url: '', well_known: '', scopes: 'openid profile email',
  audience: '', user_id_field: 'sub', username_field: 'preferred_username', display_name_field: 'name',
  email_field: 'email', auth_style: 0,
};
const URL_FIELDS = ['authorization_endpoint', 'token_endpoint', 'user_info_endpoint', 'jwks_url'];
const MAPPINGS = ['user_id_field', 'username_field', 'display_name_field', 'email_field'];

// System settings (root): the custom OAuth 2 / OpenID Connect providers, added, edited and deleted; "Discover" fills
// the endpoints from the issuer's /.well-known/openid-configuration (fetched by the server).
export default function CustomOAuthSettings({ server }) {
  const { t } = useTranslation();
  const { data: providers, mutate } = useSWR('/api/custom-oauth-provider/', listProviders);
  const [editing, setEditing] = useState(null);
  const [deleting, setDeleting] = useState(null);
  const remove = async () => {
    const provider = deleting;
    setDeleting(null);
    try {
      await deleteProvider(provider.id);
      mutate();
    } catch {
      /* toast shown by the client */
    }
  };
  return (
    <div className="card mb-5" data-testid="card-customOAuth">
      <header className="card-header">
        <p className="card-header-title">{t('customOAuth.title')}</p>
        <div className="card-header-icon">
          <button type="button" className="button is-small is-primary" onClick={() => setEditing(EMPTY)}
            data-testid="custom-oauth-add">{t('common.add')}</button>
        </div>
      </header>
      <div className="card-content table-container" tabIndex={0} role="region" aria-label={t('customOAuth.title')}>
        <p className="help mb-3">{t('customOAuth.help')}</p>
        <table className="table is-fullwidth">
          <thead>
            <tr><th>{t('customOAuth.name')}</th><th>Slug</th><th>{t('customOAuth.kind')}</th><th>{t('customOAuth.enabled')}</th><th><span className="is-sr-only">{t('common.actions')}</span></th></tr>
          </thead>
          <tbody>
            {(providers || []).map((p) => (
              <tr key={p.id} data-testid={`custom-oauth-row-${p.slug}`}>
                <td>{p.name}</td>
                <td><code>{p.slug}</code></td>
                <td>{p.scopes.split(' ').includes('openid') ? 'OpenID Connect' : 'OAuth 2'}</td>
                <td>{p.enabled ? t('customOAuth.yes') : t('customOAuth.no')}</td>
                <td className="has-text-right">
                  <div className="buttons is-right">
                    <button type="button" className="button is-small" onClick={() => setEditing(p)}
                      aria-label={`${t('common.edit')} ${p.name}`}>{t('common.edit')}</button>
                    <button type="button" className="button is-small is-danger is-light" onClick={() => setDeleting(p)}
                      aria-label={`${t('common.delete')} ${p.name}`}>{t('common.delete')}</button>
                  </div>
                </td>
              </tr>
            ))}
            {providers && providers.length === 0 && (
              <tr><td colSpan={5} className="has-text-grey">{t('customOAuth.none')}</td></tr>
            )}
          </tbody>
        </table>
      </div>
      {editing && (
        <ProviderModal initial={editing} server={server} onClose={() => setEditing(null)}
          onSaved={() => { setEditing(null); mutate(); }} />
      )}
      {deleting && (
        <ConfirmModal danger title={`${t('common.delete')} ${deleting.name}`} confirmLabel={t('common.delete')}
          message={t('customOAuth.deleteConfirm', { name: deleting.name })} onConfirm={remove} onCancel={() => setDeleting(null)} />
      )}
    </div>
  );
}

function ProviderModal({ initial, server, onClose, onSaved }) {
  const { t } = useTranslation();
  const [form, setForm] = useState({ ...EMPTY, ...initial, client_secret: '' });
  const set = (name) => (value) => setForm((f) => ({ ...f, [name]: value }));
  const creating = !initial.id;
  const { submit, loading } = useSubmit(() => {
    const { id, client_secret_set: _set, created_at: _c, updated_at: _u, kind: _k, icon: _i, ...fields } = form;
    const body = { ...fields, auth_style: Number(fields.auth_style) };
    return creating ? createProvider(body) : updateProvider(initial.id, body);
  }, { success: t('common.saveSuccess'), onSuccess: onSaved });
  const { submit: discover, loading: discovering } = useSubmit(() => discoverProvider(form.issuer), {
    success: t('customOAuth.discovered'),
    onSuccess: ({ well_known_url: url, discovery: d }) => setForm((f) => ({
      ...f, well_known: url, issuer: d.issuer || f.issuer,
      authorization_endpoint: d.authorization_endpoint || f.authorization_endpoint,
      token_endpoint: d.token_endpoint || f.token_endpoint,
      user_info_endpoint: d.userinfo_endpoint || f.user_info_endpoint, jwks_url: d.jwks_uri || f.jwks_url,
    })),
  });
  return (
    <Modal title={creating ? t('customOAuth.add') : t('customOAuth.edit', { name: initial.name })} onClose={onClose}
      testId="custom-oauth-modal" onSubmit={submit}
      footer={<button type="submit" className={`button is-primary ${loading ? 'is-loading' : ''}`} data-testid="custom-oauth-save">{t('common.save')}</button>}>
      <TextInput label={t('customOAuth.name')} value={form.name} onChange={set('name')} data-testid="custom-oauth-name" />
      <TextInput label="Slug" value={form.slug} onChange={set('slug')} data-testid="custom-oauth-slug"
        help={t('customOAuth.callback', { url: `${server}/oauth/${form.slug || '…'}` })} />
      <Switch label={t('customOAuth.enabled')} checked={form.enabled} onChange={set('enabled')} />
      <div className="field has-addons is-align-items-flex-end">
        <div className="control is-expanded">
          <TextInput label="Issuer" value={form.issuer} onChange={set('issuer')} data-testid="custom-oauth-issuer" />
        </div>
        <div className="control mb-3">
          <button type="button" className={`button is-info ${discovering ? 'is-loading' : ''}`} disabled={!form.issuer}
            onClick={() => discover()} data-testid="custom-oauth-discover">{t('customOAuth.discover')}</button>
        </div>
      </div>
      <TextInput label="Client ID" value={form.client_id} onChange={set('client_id')} data-testid="custom-oauth-client-id" />
      <TextInput label="Client Secret" type="password" value={form.client_secret} onChange={set('client_secret')}
        autoComplete="new-password" data-testid="custom-oauth-client-secret"
        placeholder={initial.client_secret_set ? t('customOAuth.secretKept') : ''} />
      {URL_FIELDS.map((name) => (
        <TextInput key={name} label={t(`customOAuth.field.${name}`)} value={form[name]} onChange={set(name)}
          data-testid={`custom-oauth-${name}`} />
      ))}
      <TextInput label="Scopes" value={form.scopes} onChange={set('scopes')} help={t('customOAuth.scopesHelp')} />
      <TextInput label="Audience" value={form.audience} onChange={set('audience')} help={t('customOAuth.audienceHelp')} />
      <SelectInput label={t('customOAuth.authStyle')} value={String(form.auth_style)} onChange={set('auth_style')}
        options={[{ value: '0', label: t('customOAuth.authAuto') }, { value: '1', label: t('customOAuth.authParams') },
          { value: '2', label: t('customOAuth.authHeader') }]} />
      <div className="columns is-multiline">
        {MAPPINGS.map((name) => (
          <div className="column is-half" key={name}>
            <TextInput label={t(`customOAuth.field.${name}`)} value={form[name]} onChange={set(name)} />
          </div>
        ))}
      </div>
    </Modal>
  );
}
