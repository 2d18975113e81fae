import { useEffect } from 'react';
import useSWR from 'swr';
import { useNavigate } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import { listOf } from '../../lib/query';
import { showError } from '../../lib/toast';
import { TOKEN_STATUS } from '../../constants/token';

export const CHAT_TOKENS_KEY = '/api/token/?p=0&size=100';
export const NO_TOKEN_REDIRECT_MS = 1500;

// The key of the first enabled token among the first 100; without one, an error and /token after 1.5 s.
export default function useChatKey() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { data } = useSWR(CHAT_TOKENS_KEY);
  const loaded = data !== undefined;
  const token = listOf(data).items.find((tk) => tk.status === TOKEN_STATUS.ENABLED);
  const missing = loaded && !token;

  useEffect(() => {
    if (!missing) return undefined;
    showError(t('chat.noEnabledToken'));
    const timer = setTimeout(() => navigate('/token'), NO_TOKEN_REDIRECT_MS);
    return () => clearTimeout(timer);
  }, [missing, navigate, t]);

  return { key: token ? token.key : null, loaded };
}
