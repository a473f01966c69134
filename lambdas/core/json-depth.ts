/**
 * Whether a JSON value nests deeper than `limit`; walked with a stack of its own, so any depth is
 * measured without recursion (a model's arguments and an approver's edit alike).
 *
 * @example
 * nestsDeeperThan({ a: { b: 1 } }, 1) // true
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    if (next.depth >= limit) return true;
    for (const member of Object.values(next.value)) pending.push({ value: member, depth: next.depth + 1 });
  }
  return false;
}
