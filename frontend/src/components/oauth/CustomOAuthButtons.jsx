import { useTranslation } from 'react-i18next';
import { startCustomOAuth } from '../../api/customOAuth';
import { KEYS } from '../../lib/storage';

// The login page's button for each enabled custom OAuth / OpenID Connect provider (`custom_oauth_providers` of the status).
export default function CustomOAuthButtons({ providers }) {
  const { t } = useTranslation();
  if (!providers || providers.length === 0) return null;
  return (
    <div data-testid="custom-oauth-buttons">
      <hr />
      <div className="buttons">
        {providers.map((p) => (
          <button key={p.slug} type="button" className="button is-link is-light" data-testid={`custom-oauth-${p.slug}`}
            onClick={() => startCustomOAuth(p.slug, localStorage.getItem(KEYS.aff) || '').catch(() => {})}>
            {t('customOAuth.loginWith', { name: p.name })}
          </button>
        ))}
      </div>
    </div>
  );
}
