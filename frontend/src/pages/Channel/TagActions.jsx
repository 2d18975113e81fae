import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import Modal from '../../components/Modal';
import { TextInput } from '../../components/Field';
import { showError } from '../../lib/toast';

// What every channel of the tag the list is filtered by can have done at once.
export function TagActions({ tag, onEnable, onDisable, onEdit, onClear }) {
  const { t } = useTranslation();
  return (
    <div className="notification is-link is-light py-2 px-3 is-flex is-align-items-center is-flex-wrap-wrap" data-testid="tag-actions">
      <span className="mr-3">{t('channel.tags.actionsTitle', { tag })}</span>
      <div className="buttons are-small mb-0">
        <button type="button" className="button is-success is-light" onClick={onEnable}>{t('channel.tags.enableAll')}</button>
        <button type="button" className="button is-warning is-light" onClick={onDisable}>{t('channel.tags.disableAll')}</button>
        <button type="button" className="button is-link" onClick={onEdit}>{t('channel.tags.edit')}</button>
        <button type="button" className="button" onClick={onClear}>{t('channel.tags.clearFilter')}</button>
      </div>
    </div>
  );
}

// The tag to give the `count` selected channels (empty: their tag is removed).
export function SetTagModal({ count, onSubmit, onClose }) {
  const { t } = useTranslation();
  const [tag, setTag] = useState('');
  return (
    <Modal title={t('channel.tags.setTitle', { count })} onClose={onClose} testId="set-tag-modal" onSubmit={() => onSubmit(tag.trim())}
      footer={(
        <>
          <button type="submit" className="button is-primary">{t('common.submit')}</button>
          <button type="button" className="button" onClick={onClose}>{t('common.cancel')}</button>
        </>
      )}>
      <TextInput label={t('channel.form.tag')} help={t('channel.tags.setHelp')} value={tag} onChange={setTag} maxLength={64} />
    </Modal>
  );
}

// Priority and weight for every channel of `tag`; a field left empty keeps each channel's own value.
export function TagEditModal({ tag, onSubmit, onClose }) {
  const { t } = useTranslation();
  const [priority, setPriority] = useState('');
  const [weight, setWeight] = useState('');
  const submit = () => {
    const fields = {};
    const read = (raw, name, min, label) => {
      if (String(raw).trim() === '') return true;
      const n = Number(raw);
      if (!Number.isInteger(n) || n < min) {
        showError(t('channel.numberMin', { field: label, min }));
        return false;
      }
      fields[name] = n;
      return true;
    };
    if (!read(priority, 'priority', -999, t('channel.priority')) || !read(weight, 'weight', 0, t('channel.weight'))) return undefined;
    if (Object.keys(fields).length === 0) {
      showError(t('channel.tags.nothingToChange'));
      return undefined;
    }
    return onSubmit(fields);
  };
  return (
    <Modal title={t('channel.tags.editTitle', { tag })} onClose={onClose} testId="tag-edit-modal" onSubmit={submit}
      footer={(
        <>
          <button type="submit" className="button is-primary">{t('common.submit')}</button>
          <button type="button" className="button" onClick={onClose}>{t('common.cancel')}</button>
        </>
      )}>
      <p className="help mb-3">{t('channel.tags.editHelp')}</p>
      <div className="columns">
        <div className="column">
          <TextInput label={t('channel.priority')} type="number" min={-999} value={priority} onChange={setPriority}
            placeholder={t('channel.tags.keep')} />
        </div>
        <div className="column">
          <TextInput label={t('channel.weight')} type="number" min={0} value={weight} onChange={setWeight}
            placeholder={t('channel.tags.keep')} />
        </div>
      </div>
    </Modal>
  );
}
