import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import useGroups from '../../hooks/useGroups';
import { updateOption } from '../../api/option';
import { showError, showSuccess } from '../../lib/toast';
import { limitsToRows, rowsToLimits } from '../../lib/limits';
import LimitsEditor from '../../components/LimitsEditor';

// GroupLimits' text as {group: editor rows}; a text that is no such object reads as none (the server refused it).
export function groupRows(text) {
  try {
    const data = JSON.parse(text || '{}');
    if (!data || typeof data !== 'object' || Array.isArray(data)) return {};
    return Object.fromEntries(Object.entries(data).map(([group, limits]) => [group, limitsToRows(limits)]));
  } catch {
    return {};
  }
}

// {group: rows} as GroupLimits' text: groups without rows left out, "" for none.
export function groupLimitsText(rowsByGroup) {
  const entries = Object.entries(rowsByGroup).filter(([, rows]) => rows.length > 0);
  return entries.length ? JSON.stringify(Object.fromEntries(entries.map(([g, rows]) => [g, rowsToLimits(rows)]))) : '';
}

/*
 * The GroupLimits option (README, Budgets and limits): per group, limits over time that hold for each of its users.
 * One save for every group; the server checks each entry and names the one it refuses ("GroupLimits.vip[0].window …"),
 * which is shown, nothing saved.
 */
export default function GroupLimitsSetting({ options, onSaved }) {
  const { t } = useTranslation();
  const { groups } = useGroups();
  const stored = useMemo(() => groupRows(options.GroupLimits), [options.GroupLimits]);
  const [edits, setEdits] = useState(null);
  const [pick, setPick] = useState('');
  const [saving, setSaving] = useState(false);
  const current = edits || stored;
  const names = Object.keys(current);
  const addable = Array.from(new Set([...(groups || []), 'default'])).filter((g) => !names.includes(g)).sort();
  const chosen = pick && addable.includes(pick) ? pick : addable[0] || '';
  const change = (next) => setEdits(next);

  const save = async () => {
    setSaving(true);
    try {
      await updateOption('GroupLimits', groupLimitsText(current));
      showSuccess(t('limits.saved'));
      setEdits(null);
      onSaved();
    } catch (e) {
      showError(e.message);
    } finally {
      setSaving(false);
    }
  };

  return (
    <div className="card mb-5" data-testid="card-group-limits">
      <header className="card-header"><h2 className="card-header-title">{t('limits.groupTitle')}</h2></header>
      <div className="card-content">
        <p className="is-size-7 mb-3">{t('limits.groupHelp')}</p>
        {names.length === 0 && <p className="mb-3" data-testid="group-limits-none">{t('limits.noGroups')}</p>}
        {names.map((group) => (
          <div key={group} className="box" data-testid={`group-limits-${group}`}>
            <LimitsEditor rows={current[group]} label={t('limits.groupEditor', { group })} testId={`group-limits-${group}-editor`}
              onChange={(rows) => change({ ...current, [group]: rows })} />
            <button type="button" className="button is-small is-danger is-light"
              onClick={() => change(Object.fromEntries(Object.entries(current).filter(([g]) => g !== group)))}>
              {t('limits.groupRemove', { group })}
            </button>
          </div>
        ))}
        {addable.length > 0 && (
          <div className="field has-addons">
            <div className="control">
              <div className="select is-small">
                <select aria-label={t('limits.groupPick')} value={chosen} onChange={(e) => setPick(e.target.value)}
                  data-testid="group-limits-pick">
                  {addable.map((g) => <option key={g} value={g}>{g}</option>)}
                </select>
              </div>
            </div>
            <div className="control">
              <button type="button" className="button is-small is-info is-light" data-testid="group-limits-add"
                onClick={() => change({ ...current, [chosen]: [] })}>
                {t('limits.groupAdd')}
              </button>
            </div>
          </div>
        )}
        <button type="button" className={`button is-primary ${saving ? 'is-loading' : ''}`} disabled={saving || !edits}
          onClick={save} data-testid="group-limits-save">
          {t('limits.save')}
        </button>
      </div>
    </div>
  );
}
