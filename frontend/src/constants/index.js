export const DEFAULT_SYSTEM_NAME = 'AI Gateway'; // the server's default SystemName (api/services/option_rules.py)
export const DEFAULT_LOGO = '/logo.png';
export const ITEMS_PER_PAGE = 10;
export const PAGE_SIZE_OPTIONS = [10, 20, 50, 100];
export const RESEND_COOLDOWN_SECONDS = 30;
export const PASSWORD_MIN_LENGTH = 8;
export const USERNAME_MAX_LENGTH = 20;
export const DEFAULT_GROUP = 'default';
