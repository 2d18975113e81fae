// Midjourney actions, submit codes and statuses; async task statuses and actions.
export const MJ_ACTIONS = ['IMAGINE', 'UPSCALE', 'VARIATION', 'HIGH_VARIATION', 'LOW_VARIATION', 'PAN', 'DESCRIBE', 'BLEND',
  'UPLOAD', 'SHORTEN', 'REROLL', 'INPAINT', 'ZOOM', 'CUSTOM_ZOOM', 'MODAL', 'SWAP_FACE'];
export const MJ_CODES = { 1: ['mj.code.submitted', 'is-success'], 21: ['mj.code.waiting', 'is-warning'],
  22: ['mj.code.duplicate', 'is-warning'], 0: ['mj.code.notSubmitted', 'is-light'] };
export const MJ_STATUSES = { SUCCESS: 'is-success', NOT_START: 'is-light', SUBMITTED: 'is-warning', IN_PROGRESS: 'is-info',
  FAILURE: 'is-danger', MODAL: 'is-warning' };

export const TASK_STATUSES = { SUCCESS: 'is-success', NOT_START: 'is-light', SUBMITTED: 'is-warning', IN_PROGRESS: 'is-info',
  FAILURE: 'is-danger', QUEUED: 'is-warning', UNKNOWN: 'is-light', '': 'is-light' };
export const TASK_ACTIONS = ['MUSIC', 'LYRICS', 'GENERATE'];
export const TASK_PLATFORMS = ['suno', 'video'];

// The task models (the catalogue's Midjourney mj_* and swap_face, Suno's suno_*): submitted as tasks on their own
// routes, never chatted with.
export const isTaskModel = (name) => /^(mj_|suno_)/.test(name) || name === 'swap_face';

// "45%" → 45 (0 when absent).
export function progressPercent(progress) {
  const n = parseFloat(String(progress ?? '').replace('%', ''));
  return Number.isFinite(n) ? Math.max(0, Math.min(100, n)) : 0;
}
