import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import usePricing from '../../hooks/usePricing';
import { useUser } from '../../context/UserContext';
import { copy } from '../../lib/clipboard';
import { renderRatio } from '../../lib/format';
import { showError, showInfo, showSuccess } from '../../lib/toast';
import { DEFAULT_GROUP } from '../../constants';
import TableState from '../../components/TableState';
import RatioExplanation from '../../components/RatioExplanation';
import { isAdmin, isRoot } from '../../lib/auth';
import UnpricedModels from './UnpricedModels';

const money = (v) => `$${renderRatio(v)}`;

// Characters of the query in order, case-insensitive ("g4o" finds gpt-4o).
export function fuzzyMatch(name, query) {
  const q = query.trim().toLowerCase();
  if (!q) return true;
  const n = name.toLowerCase();
  if (n.includes(q)) return true;
  let i = 0;
  for (const ch of n) {
    if (ch === q[i]) i += 1;
    if (i === q.length) return true;
  }
  return false;
}

// Names starting with gpt first, then by name.
export function sortModels(models) {
  return [...models].sort((a, b) => {
    const ga = a.model_name.startsWith('gpt') ? 0 : 1;
    const gb = b.model_name.startsWith('gpt') ? 0 : 1;
    return ga - gb || a.model_name.localeCompare(b.model_name);
  });
}

function Price({ model, ratio }) {
  const { t } = useTranslation();
  if (model.quota_type === 1) return <span>{t('pricing.perCall', { price: money(model.model_price * ratio) })}</span>;
  const prompt = model.model_ratio * 2 * ratio;
  const completion = model.model_ratio * model.completion_ratio * 2 * ratio;
  return (
    <div className="is-size-7">
      <p>{t('pricing.promptPrice', { price: money(prompt) })}</p>
      <p>{t('pricing.completionPrice', { price: money(completion) })}</p>
      {model.cache_ratio != null && (
        <p data-testid="pricing-cache-read">{t('pricing.cacheReadPrice', { price: money(model.model_ratio * model.cache_ratio * 2 * ratio) })}</p>
      )}
      {model.cache_creation_ratio != null && (
        <p data-testid="pricing-cache-write">
          {t('pricing.cacheWritePrice', { price: money(model.model_ratio * model.cache_creation_ratio * 2 * ratio) })}
        </p>
      )}
      {model.cache_creation_1h_ratio != null && (
        <p data-testid="pricing-cache-write-1h">
          {t('pricing.cacheWrite1hPrice', { price: money(model.model_ratio * model.cache_creation_1h_ratio * 2 * ratio) })}
        </p>
      )}
    </div>
  );
}

export default function PricingPage() {
  const { t } = useTranslation();
  const { user } = useUser();
  const { models, groupRatio, usableGroup, userGroup, unpriced, loaded, isLoading, mutate } = usePricing();
  const ownGroup = userGroup || (user && user.group) || DEFAULT_GROUP;
  const [viewGroup, setViewGroup] = useState(null);
  const [filter, setFilter] = useState('');
  const [selected, setSelected] = useState([]);
  const [explain, setExplain] = useState(false);
  const group = viewGroup || ownGroup;
  const ratio = groupRatio[group] ?? 1;

  const rows = useMemo(() => sortModels(models).filter((m) => fuzzyMatch(m.model_name, filter)), [models, filter]);
  const usable = usableGroup && Object.keys(usableGroup).length > 0 ? usableGroup : null;

  const switchGroup = (g) => {
    setViewGroup(g);
    showInfo(t('pricing.viewing', { group: g, ratio: groupRatio[g] ?? 1 }));
  };

  const onCopySelected = async () => {
    if (selected.length === 0) {
      showError(t('pricing.selectAtLeastOne'));
      return;
    }
    if (await copy(selected.join(','))) showSuccess(t('common.copiedToClipboard'));
  };

  const toggle = (name, checked) => setSelected((prev) => (checked ? [...prev, name] : prev.filter((n) => n !== name)));

  return (
    <section>
      <h1 className="title is-4">{t('pricing.title')}</h1>
      {user ? (
        <div className="notification is-info is-light" data-testid="pricing-group-banner">
          {t('pricing.yourGroup', { group: ownGroup, ratio: groupRatio[ownGroup] ?? 1 })}
          {viewGroup && viewGroup !== ownGroup && <span className="ml-2">{t('pricing.viewingShort', { group, ratio })}</span>}
        </div>
      ) : (
        <div className="notification is-warning is-light" data-testid="pricing-group-banner">
          {t('pricing.notLoggedIn', { ratio: groupRatio[DEFAULT_GROUP] ?? 1 })}
          {viewGroup && <span className="ml-2">{t('pricing.viewingShort', { group, ratio })}</span>}
        </div>
      )}
      <div className="notification is-light" data-testid="pricing-formula">{t('pricing.formula')}</div>
      {isAdmin(user) && <UnpricedModels models={unpriced} canSet={isRoot(user)} onSaved={() => mutate()} />}
      <div className="field is-grouped is-grouped-multiline">
        <div className="control is-expanded">
          <input className="input" aria-label={t('pricing.filter')} placeholder={t('pricing.filter')} value={filter}
            onChange={(e) => setFilter(e.target.value)} />
        </div>
        <div className="control">
          <button type="button" className="button" onClick={onCopySelected}>{t('pricing.copySelected')}</button>
        </div>
        <div className="control">
          <button type="button" className="button is-ghost" aria-expanded={explain} onClick={() => setExplain(!explain)}>
            {t('pricing.ratioHelp')}
          </button>
        </div>
      </div>
      {explain && <div className="notification is-info is-light content pre-wrap" data-testid="pricing-ratio-help">{t('pricing.ratioHelpText')}<RatioExplanation /></div>}
      <div className="table-container" tabIndex={0} role="region" aria-label={t('pricing.title')}>
        <table className="table is-fullwidth is-hoverable" data-testid="pricing-table">
          <thead>
            <tr>
              <th><span className="is-sr-only">{t('token.select')}</span></th>
              <th>{t('pricing.availability')}</th><th>{t('pricing.model')}</th><th>{t('pricing.billingType')}</th>
              <th>{t('pricing.groups')}</th><th>{t('pricing.ratios')}</th><th>{t('pricing.price')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((m) => {
              const available = (m.enable_groups || []).includes(group);
              const groups = (m.enable_groups || []).filter((g) => !usable || usable[g] !== undefined || g === ownGroup);
              return (
                <tr key={m.model_name} data-testid={`pricing-row-${m.model_name}`}>
                  <td>
                    <input type="checkbox" aria-label={t('token.selectRow', { name: m.model_name })} checked={selected.includes(m.model_name)}
                      onChange={(e) => toggle(m.model_name, e.target.checked)} />
                  </td>
                  <td>
                    <span className={`tag ${available ? 'is-success' : 'is-danger'} is-light`} data-testid="availability"
                      data-available={available} title={available ? t('pricing.available', { group }) : t('pricing.unavailable', { group })}>
                      {available ? '✓' : '✗'}
                    </span>
                  </td>
                  <td><strong>{m.model_name}</strong></td>
                  <td>
                    <span className={`tag ${m.quota_type === 1 ? 'is-warning' : 'is-info'} is-light`}>
                      {m.quota_type === 1 ? t('pricing.perCallType') : t('pricing.ratioType')}
                    </span>
                  </td>
                  <td>
                    <div className="tags">
                      {groups.map((g) => (
                        <button key={g} type="button" className={`tag ${g === group ? 'is-primary' : 'is-light'}`}
                          aria-label={t('pricing.viewGroup', { group: g })} onClick={() => switchGroup(g)}>
                          {g}
                        </button>
                      ))}
                    </div>
                  </td>
                  <td className="is-size-7">
                    {m.quota_type === 1 ? <p>{t('pricing.groupRatio', { ratio })}</p> : (
                      <>
                        <p>{t('pricing.modelRatio', { ratio: m.model_ratio })}</p>
                        <p>{t('pricing.completionRatio', { ratio: m.completion_ratio })}</p>
                        {m.cache_ratio != null && <p>{t('pricing.cacheRatio', { ratio: m.cache_ratio })}</p>}
                        {m.cache_creation_ratio != null && <p>{t('pricing.cacheWriteRatio', { ratio: m.cache_creation_ratio })}</p>}
                        {m.cache_creation_1h_ratio != null && <p>{t('pricing.cacheWrite1hRatio', { ratio: m.cache_creation_1h_ratio })}</p>}
                        <p>{t('pricing.groupRatio', { ratio })}</p>
                      </>
                    )}
                  </td>
                  <td data-testid="pricing-price"><Price model={m} ratio={ratio} /></td>
                </tr>
              );
            })}
            <TableState loading={!loaded && isLoading} empty={(loaded || !isLoading) && rows.length === 0} colSpan={7} />
          </tbody>
        </table>
      </div>
    </section>
  );
}
