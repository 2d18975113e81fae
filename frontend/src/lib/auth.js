import { getStoredUser } from './storage';

export const ROLE = { USER: 1, ADMIN: 10, ROOT: 100 };

export function isAdmin(user = getStoredUser()) {
  return Boolean(user) && user.role >= ROLE.ADMIN;
}

export function isRoot(user = getStoredUser()) {
  return Boolean(user) && user.role >= ROLE.ROOT;
}
