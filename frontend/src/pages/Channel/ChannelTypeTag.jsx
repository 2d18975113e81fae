import { useTranslation } from 'react-i18next';
import useChannelTypes from '../../hooks/useChannelTypes';
import localized from '../../lib/localized';

// The label of a channel type from the server's catalogue ("Unknown type" for a number it lacks; the bare number
// while it loads or when it failed to), and a "Retired" tag carrying the reason as its title when the type is retired.
export default function ChannelTypeTag({ type }) {
  const { t, i18n } = useTranslation();
  const { types, byType } = useChannelTypes();
  const entry = byType.get(Number(type));
  if (types.length === 0) return <span className="tag is-link is-light" data-testid="channel-type-label">{type}</span>;
  const reason = entry && localized(entry.retired, i18n.language);
  return (
    <>
      <span className="tag is-link is-light" data-testid="channel-type-label">
        {entry ? localized(entry.label, i18n.language) : t('channel.type.unknown')}
      </span>
      {reason && (
        <span className="tag is-danger is-light" title={reason} data-testid="channel-type-retired">
          {t('channel.retired')}
          <span className="is-sr-only">: {reason}</span>
        </span>
      )}
    </>
  );
}
