import { checkSync } from 'recheck';
import { describe, expect, it } from 'vitest';
import { collectRegularExpressions } from './support/regular-expression-sources.js';

// Issue #20 item 3: every pattern in lambdas/ may see untrusted text (run inputs, model and tool
// output, stored records, headers), so every one must match in linear time. recheck's pure
// JavaScript checker (checkSync) runs here without Java, a native binary or the network.
const sites = collectRegularExpressions('lambdas');

/** Each distinct (source, flags) once, with every place that builds it. */
const patterns = new Map<string, { source: string; flags: string; places: string[] }>();
for (const site of sites) {
  if (site.source === undefined) continue;
  const key = `/${site.source}/${site.flags}`;
  const entry = patterns.get(key) ?? { source: site.source, flags: site.flags, places: [] };
  entry.places.push(`${site.file}:${site.line}`);
  patterns.set(key, entry);
}

/**
 * recheck's fuzzer is seeded (0), but its time limits cut its search wherever the machine's
 * load puts them: without them its verdict is the same on every run. (The scripted model's
 * clause pattern is fuzzed safe here; recheck's exact automaton checker, which takes ten
 * minutes on it, also finds it linear.)
 */
const DETERMINISTIC = { timeout: null, attackTimeout: null, incubationTimeout: null, seedingTimeout: null };

describe('regular expressions in lambdas/', () => {
  it('are found (the walker reads literals and RegExp calls)', () => {
    expect(sites.length).toBeGreaterThan(50);
    expect(sites.some((site) => site.spelling === 'RegExp(')).toBe(true);
  });

  it('are all built from literals, so an analyser can check them', () => {
    const unchecked = sites
      .filter((site) => site.source === undefined)
      .map((site) => `${site.file}:${site.line}`);
    expect(unchecked).toEqual([]);
  });

  for (const [key, { source, flags, places }] of patterns) {
    const name = `${key.length > 100 ? `${key.slice(0, 100)}…` : key} is linear (${places.join(', ')})`;
    it(name, { timeout: 600_000 }, () => {
      // Act
      const diagnostics = checkSync(source, flags, DETERMINISTIC);

      // Assess: `unknown` (an unsupported feature) fails too: what is not shown safe is refused.
      const verdict =
        diagnostics.status === 'vulnerable'
          ? `vulnerable: ${diagnostics.complexity.summary}, attack ${diagnostics.attack.pattern}`
          : diagnostics.status === 'unknown'
            ? `unknown: ${diagnostics.error.kind}`
            : diagnostics.status;
      expect(verdict).toBe('safe');
    });
  }
});
