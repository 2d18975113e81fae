import { del, post, put } from './client';

export const updateOption = (key, value) => put('/api/option/', { key, value: String(value) }, { silent: true });

// Saves [key, value] pairs one after another, in the given order (an option may need one saved before it:
// PaymentEnabled needs the Stripe secrets). Resolves to {saved: [key], failed: [{key, message}]}.
export async function updateOptions(entries) {
  const saved = [];
  const failed = [];
  for (const [key, value] of entries) {
    try {
      // eslint-disable-next-line no-await-in-loop
      await updateOption(key, value);
      saved.push(key);
    } catch (e) {
      failed.push({ key, message: e.message });
    }
  }
  return { saved, failed };
}

export const resetModelRatio = () => post('/api/option/rest_model_ratio');
export const clearLogs = (targetTimestamp) => del('/api/log/', { params: { target_timestamp: targetTimestamp }, silent: true });
