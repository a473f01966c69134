import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../lambdas/core/canonical-json.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth so equal values give equal bytes', () => {
    // Prepare
    const left = { b: 1, a: { d: [2, { z: true, y: null }], c: 'x' } };
    const right = { a: { c: 'x', d: [2, { y: null, z: true }] }, b: 1 };

    // Act
    const serialised = [canonicalJson(left), canonicalJson(right)];

    // Assess
    expect(serialised[0]).toBe('{"a":{"c":"x","d":[2,{"y":null,"z":true}]},"b":1}');
    expect(serialised[1]).toBe(serialised[0]);
  });

  it('drops undefined properties and writes non-finite numbers as null', () => {
    expect(canonicalJson({ a: undefined, b: Number.NaN, c: [undefined] })).toBe('{"b":null,"c":[null]}');
  });
});
