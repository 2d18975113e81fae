// One row of a paged list ({items, …} as SWR holds it) changed in place.
export const patchRow = (current, id, fields) => current && {
  ...current, items: current.items.map((row) => (row.id === id ? { ...row, ...fields } : row)),
};

// Change a row at once and on the server: `shown` is displayed while `request` runs (none: the row
// waits for the answer), the list rolls back if it fails (the promise rejects); `request` resolves
// to the fields the server confirmed, or to nothing to keep `shown`.
export const patchOptimistically = (mutate, id, shown, request) => mutate(async (current) => {
  const confirmed = await request();
  return patchRow(current, id, confirmed || shown);
}, { optimisticData: shown ? (current) => patchRow(current, id, shown) : undefined, rollbackOnError: true, revalidate: false });
