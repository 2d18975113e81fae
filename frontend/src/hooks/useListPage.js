import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { ITEMS_PER_PAGE, PAGE_SIZE_OPTIONS } from '../constants';
import { getPageSize, setPageSize as rememberPageSize } from '../lib/storage';

/*
 * The state of a console list page: its filter form, the applied filters, the page and the page size.
 * The applied state lives in the address (?keyword=…&page=2&page_size=50): a reload or a shared link restores it,
 * Back and Forward move through the applied states. The form is what is being typed; apply() makes it the applied state.
 *
 * Address rules: `page` is 1-based (the state's page is 0-based like the API's p); a value equal to its default is
 * left out; a value that is not valid (a page that is not a positive integer, a page size not offered, a filter its
 * `valid` check refuses) falls back to the default. Defaults are taken once, when the page opens (a time range's
 * "now" or the remembered page size), so that an address without them means "the defaults".
 */
export const PAGE_PARAM = 'page';
export const PAGE_SIZE_PARAM = 'page_size';

const resolveDefaults = (filters) => Object.fromEntries(
  Object.entries(filters).map(([name, value]) => [name, typeof value === 'function' ? value() : value]));

// Every string value trimmed (the usual normalize of a search form).
export const trimAll = (form) => Object.fromEntries(
  Object.entries(form).map(([name, value]) => [name, typeof value === 'string' ? value.trim() : value]));

// The applied state in `params`, each invalid or missing value replaced by its default.
export function readListQuery(params, { filters: defaults, pageSize: defaultPageSize }, valid = {}) {
  const filters = {};
  Object.keys(defaults).forEach((name) => {
    const value = params.get(name);
    filters[name] = value !== null && (!valid[name] || valid[name](value)) ? value : defaults[name];
  });
  const page = Number(params.get(PAGE_PARAM));
  const size = Number(params.get(PAGE_SIZE_PARAM));
  return {
    filters,
    page: Number.isInteger(page) && page >= 1 ? page - 1 : 0,
    pageSize: PAGE_SIZE_OPTIONS.includes(size) ? size : defaultPageSize,
  };
}

// `params` with the list's own entries set to `state` (defaults left out); other entries are kept.
export function writeListQuery(params, state, { filters: defaults, pageSize: defaultPageSize }) {
  const next = new URLSearchParams(params);
  const put = (name, value, fallback) => (value === fallback ? next.delete(name) : next.set(name, String(value)));
  Object.keys(defaults).forEach((name) => put(name, state.filters[name], defaults[name]));
  put(PAGE_PARAM, state.page + 1, 1);
  put(PAGE_SIZE_PARAM, state.pageSize, defaultPageSize);
  return next;
}

/*
 * options:
 *   filters            {name: default}: the form's fields and their defaults (strings, or functions giving one)
 *   valid              {name: (value) => boolean}: checks of values read from the address
 *   normalize          (form) => filters applied (e.g. trimAll); the identity when not given
 *   rememberPageSize   the page size is the user's remembered one (local storage) unless the address says otherwise
 * The options are read once, when the page opens.
 */
export default function useListPage(options = {}) {
  const [config] = useState(() => ({
    defaults: {
      filters: resolveDefaults(options.filters || {}),
      pageSize: options.rememberPageSize === false ? ITEMS_PER_PAGE : getPageSize(ITEMS_PER_PAGE),
    },
    valid: options.valid || {},
    normalize: options.normalize || ((form) => form),
    remember: options.rememberPageSize !== false,
  }));
  const [searchParams, setSearchParams] = useSearchParams();
  const query = searchParams.toString();
  const applied = useMemo(
    () => readListQuery(new URLSearchParams(query), config.defaults, config.valid), [query, config]);
  const [form, setForm] = useState(applied.filters);

  // The form follows the applied filters when they change from outside (Back, Forward, a link); not after apply().
  const appliedKey = JSON.stringify(applied.filters);
  const lastApplied = useRef(appliedKey);
  useEffect(() => {
    if (lastApplied.current === appliedKey) return;
    lastApplied.current = appliedKey;
    setForm(JSON.parse(appliedKey));
  }, [appliedKey]);

  const go = useCallback((next) => {
    lastApplied.current = JSON.stringify(next.filters);
    setSearchParams(writeListQuery(new URLSearchParams(query), next, config.defaults));
  }, [query, config, setSearchParams]);

  // Applies the form (page 1); false when nothing would change (the caller may then reload the list).
  const apply = (event) => {
    if (event && typeof event.preventDefault === 'function') event.preventDefault();
    const filters = config.normalize(form);
    if (JSON.stringify(filters) === appliedKey && applied.page === 0) return false;
    go({ ...applied, filters, page: 0 });
    return true;
  };

  // Sets one filter and applies it at once (e.g. a select that filters on change); other typed fields stay typed.
  const setFilter = (name, value) => {
    setForm((prev) => ({ ...prev, [name]: value }));
    go({ ...applied, filters: { ...applied.filters, [name]: value }, page: 0 });
  };

  const reset = () => {
    setForm(config.defaults.filters);
    go({ filters: config.defaults.filters, page: 0, pageSize: config.defaults.pageSize });
  };

  const setPage = (page) => go({ ...applied, page });

  const setPageSize = (pageSize) => {
    if (config.remember) rememberPageSize(pageSize);
    go({ ...applied, page: 0, pageSize });
  };

  // value/onChange of a form input bound to `name`.
  const field = (name) => ({ value: form[name], onChange: (e) => setForm((prev) => ({ ...prev, [name]: e.target.value })) });

  const { filters, page, pageSize } = applied;
  return {
    form, setForm, field, filters, page, pageSize, setPage, setPageSize, apply, setFilter, reset,
    params: { ...filters, page, pageSize },
    pagination: { page, pageSize, onPageChange: setPage, onPageSizeChange: setPageSize },
  };
}
