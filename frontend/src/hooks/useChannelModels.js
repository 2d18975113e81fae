import useSWR from 'swr';
import { KEYS, readJSON, writeJSON } from '../lib/storage';

const remember = (data) => writeJSON(KEYS.channelModels, data);

// Map of channel type → model list, mirrored under local storage channel_models.
export default function useChannelModels() {
  const { data, error, isLoading } = useSWR('/api/models', { onSuccess: remember });
  return { byType: data || readJSON(KEYS.channelModels, {}) || {}, error, isLoading };
}
