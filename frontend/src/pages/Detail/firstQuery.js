import { preload } from 'swr';
import { fetcher } from '../../api/client';
import { quotaDataKey } from '../../hooks/useQuotaData';
import { isAdmin } from '../../lib/auth';
import { getStoredStatus, getStoredUser } from '../../lib/storage';
import { DAY, HOUR, localToSeconds, nowSeconds, secondsToLocal } from '../../lib/time';

export const GRANULARITIES = ['hour', 'day', 'week'];
export const SPAN = { hour: DAY, day: 7 * DAY, week: 28 * DAY };

// The granularity the dashboard opens with: the server's default (status.data_export_default_time), else the hour.
export const defaultGranularity = (status) => (
  GRANULARITIES.includes(status.data_export_default_time) ? status.data_export_default_time : 'hour');

// The filter form the dashboard opens with (datetime-local texts): the granularity's span, up to an hour from now.
export const firstForm = (granularity) => ({
  start: secondsToLocal(nowSeconds() - SPAN[granularity]), end: secondsToLocal(nowSeconds() + HOUR), username: '',
});

// A filter form as the data's query (unix seconds).
export const queryOf = (form) => ({ start: localToSeconds(form.start), end: localToSeconds(form.end), username: form.username.trim() });

// Asks for the dashboard's first data while the dashboard's code is still on its way (on a slow network the two
// requests go out together instead of one after the other); the page's first read finds it under the same key (the
// form's times are whole minutes). A failure is the page's to show, when it reads the data.
export function preloadDashboard() {
  const user = getStoredUser();
  if (!user) return;
  const query = queryOf(firstForm(defaultGranularity(getStoredStatus())));
  const pending = preload(quotaDataKey({ admin: isAdmin(user), ...query }), fetcher);
  if (pending && typeof pending.catch === 'function') pending.catch(() => {});
}
