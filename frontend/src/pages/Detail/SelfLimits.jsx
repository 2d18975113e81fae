import { useTranslation } from 'react-i18next';
import useSelfLimits from '../../hooks/useSelfLimits';
import LimitUsage from '../../components/LimitUsage';

// The caller's limits over time with their usage and reset; nothing when they have none.
export default function SelfLimits() {
  const { t } = useTranslation();
  const { items, group } = useSelfLimits();
  if (items.length === 0) return null;
  return (
    <section className="box" data-testid="self-limits" aria-labelledby="self-limits-title">
      <h2 className="title is-6 mb-2" id="self-limits-title">{t('limits.mine')}</h2>
      <p className="is-size-7 mb-3">{t('limits.mineHelp', { group })}</p>
      <LimitUsage entries={items} showOwner group={group} testId="self-limit-usage" />
    </section>
  );
}
