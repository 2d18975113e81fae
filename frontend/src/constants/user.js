export const ROLE_LABELS = { 1: ['user.role.user', 'is-info'], 10: ['user.role.admin', 'is-warning'], 100: ['user.role.root', 'is-danger'] };
export const STATUS_LABELS = { 1: ['user.status.enabled', 'is-success'], 2: ['user.status.banned', 'is-danger'] };
export const USER_ACTIONS = ['promote', 'demote', 'disable', 'enable', 'delete'];
