/** What grouping reads of a call: its position and its tool's name. */
interface GroupedCall {
  index: number;
  tool: string;
}

/**
 * The calls of a turn that must be decided together, each group's indexes ascending (groups of
 * one are left out): two calls are tied when either's tool names the other's in `decidedWith`
 * (a tool naming itself ties its own calls), and ties chain (a tied to b, b to c: one group).
 *
 * @example
 * groupCallsDecidedTogether(
 *   [{ index: 0, tool: 'transfer' }, { index: 1, tool: 'get_page' }, { index: 2, tool: 'ledger' }],
 *   (tool) => (tool === 'transfer' ? ['ledger'] : undefined),
 * ) // [[0, 2]]
 */
export function groupCallsDecidedTogether(
  calls: readonly GroupedCall[],
  decidedWithOf: (tool: string) => readonly string[] | undefined,
): number[][] {
  const parent = new Map(calls.map((call) => [call.index, call.index]));
  const root = (index: number): number => {
    let current = index;
    for (let up = parent.get(current); up !== undefined && up !== current; up = parent.get(current)) {
      current = up;
    }
    return current;
  };
  for (const call of calls) {
    const tied = new Set(decidedWithOf(call.tool) ?? []);
    for (const other of calls) {
      if (other.index === call.index || !tied.has(other.tool)) continue;
      const [left, right] = [root(call.index), root(other.index)];
      if (left !== right) parent.set(Math.max(left, right), Math.min(left, right));
    }
  }
  const groups = new Map<number, number[]>();
  for (const call of calls)
    groups.set(root(call.index), [...(groups.get(root(call.index)) ?? []), call.index]);
  return [...groups.values()]
    .filter((group) => group.length > 1)
    .map((group) => group.sort((left, right) => left - right))
    .sort((left, right) => (left[0] ?? 0) - (right[0] ?? 0));
}
