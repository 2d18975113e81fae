import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useSWR from 'swr';
import { listBindings, startCustomOAuth, unbindProvider } from '../../api/customOAuth';
import useStatus from '../../hooks/useStatus';
import { showSuccess } from '../../lib/toast';
import { ConfirmModal } from '../Modal';

// Personal settings: the user's binding to each enabled custom provider (bind: through the provider; unbind: asked first).
export default function CustomOAuthBindings() {
  const { t } = useTranslation();
  const { status } = useStatus();
  const { data: bindings, mutate } = useSWR('/api/user/oauth/bindings', listBindings);
  const [unbinding, setUnbinding] = useState(null);
  const providers = status.custom_oauth_providers || [];
  const bound = new Map((bindings || []).map((b) => [b.provider_id, b]));
  const shown = [...providers, ...(bindings || []).filter((b) => !providers.some((p) => p.id === b.provider_id))
    .map((b) => ({ id: b.provider_id, name: b.provider_name, slug: b.provider_slug, disabled: true }))];
  if (shown.length === 0) return null;
  const unbind = async () => {
    const provider = unbinding;
    setUnbinding(null);
    try {
      await unbindProvider(provider.id);
      showSuccess(t('customOAuth.unbound', { name: provider.name }));
      mutate();
    } catch {
      /* toast shown by the client */
    }
  };
  return (
    <div className="card mb-5" data-testid="custom-oauth-bindings">
      <header className="card-header"><p className="card-header-title">{t('customOAuth.bindings')}</p></header>
      <div className="card-content table-container" tabIndex={0} role="region" aria-label={t('customOAuth.bindings')}>
        <table className="table is-fullwidth">
          <tbody>
            {shown.map((p) => {
              const binding = bound.get(p.id);
              return (
                <tr key={p.id} data-testid={`binding-${p.slug}`}>
                  <th>{p.name}</th>
                  <td>{binding ? binding.provider_user_id : <span className="has-text-grey">{t('common.unbound')}</span>}</td>
                  <td className="has-text-right">
                    {binding ? (
                      <button type="button" className="button is-small is-danger is-light" onClick={() => setUnbinding(p)}
                        aria-label={t('customOAuth.unbindName', { name: p.name })}>{t('customOAuth.unbind')}</button>
                    ) : (
                      <button type="button" className="button is-small" disabled={p.disabled}
                        onClick={() => startCustomOAuth(p.slug).catch(() => {})}
                        aria-label={t('customOAuth.bindName', { name: p.name })}>{t('common.bind')}</button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {unbinding && (
        <ConfirmModal danger title={t('customOAuth.unbindName', { name: unbinding.name })}
          message={t('customOAuth.unbindConfirm', { name: unbinding.name })} confirmLabel={t('customOAuth.unbind')}
          onConfirm={unbind} onCancel={() => setUnbinding(null)} />
      )}
    </div>
  );
}
