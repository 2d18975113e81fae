import { showAlert } from './toast';
import i18n from '../i18n';

// Copy text; on failure show the "copy manually" modal with the text.
export async function copy(text) {
  try {
    if (!navigator.clipboard) throw new Error('no clipboard');
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    showAlert({ title: i18n.t('common.copyFailed'), content: text, kind: 'warning' });
    return false;
  }
}
