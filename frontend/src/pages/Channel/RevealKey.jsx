import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useUser } from '../../context/UserContext';
import { useVerification } from '../../context/VerificationContext';
import { revealChannelKey } from '../../api/twofa';
import { isRoot } from '../../lib/auth';
import { copy } from '../../lib/clipboard';
import { showSuccess } from '../../lib/toast';

// Root's "show the stored key" of a saved channel: the server asks for a fresh verification first (the dialog opens,
// then the key is fetched again); the key stays in this form only, never in a list.
export default function RevealKey({ channelId }) {
  const { t } = useTranslation();
  const { user } = useUser() || {};
  const { withVerification } = useVerification();
  const [key, setKey] = useState(null);
  const [loading, setLoading] = useState(false);
  if (!isRoot(user)) return null;
  const reveal = async () => {
    setLoading(true);
    try {
      const data = await withVerification(() => revealChannelKey(channelId));
      setKey(data.key);
    } catch {
      /* cancelled, or the client showed why */
    } finally {
      setLoading(false);
    }
  };
  return (
    <div className="field" data-testid="channel-reveal-key">
      {key === null ? (
        <button type="button" className={`button is-small ${loading ? 'is-loading' : ''}`} onClick={reveal}
          data-testid="channel-reveal-key-button">{t('channel.form.revealKey')}</button>
      ) : (
        <>
          <label className="label" htmlFor={`stored-key-${channelId}`}>{t('channel.form.storedKey')}</label>
          <textarea id={`stored-key-${channelId}`} className="textarea is-family-monospace" readOnly rows={3} value={key}
            data-testid="channel-stored-key" />
          <div className="buttons mt-2">
            <button type="button" className="button is-small"
              onClick={async () => { if (await copy(key)) showSuccess(t('common.copiedToClipboard')); }}>{t('common.copy')}</button>
            <button type="button" className="button is-small" onClick={() => setKey(null)}>{t('channel.form.hideKey')}</button>
          </div>
        </>
      )}
    </div>
  );
}
