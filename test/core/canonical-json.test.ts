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

  // RFC 8785 (JCS), section 3.2.2 and 3.2.3: receipts (docs/receipts.md) hash this encoding.
  it('writes the RFC 8785 example as the RFC does: ECMAScript numbers and string escapes', () => {
    // Prepare
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],' +
        '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    );

    // Act
    const serialised = canonicalJson(input);

    // Assess
    expect(serialised).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('sorts keys by UTF-16 code units, as RFC 8785 does (not by code points or locale)', () => {
    // Prepare
    const input = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh",' +
        '"1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control",' +
        '"\\u00f6":"Latin Small Letter O With Diaeresis"}',
    );

    // Act
    const values = Object.values(JSON.parse(canonicalJson(input)) as Record<string, string>);
    const order = [...canonicalJson(input).matchAll(/:"([^"]+)"/g)].map((match) => match[1]);

    // Assess
    expect(values).toHaveLength(7);
    expect(order).toEqual([
      'Carriage Return',
      'One',
      'Control',
      'Latin Small Letter O With Diaeresis',
      'Euro Sign',
      'Emoji: Grinning Face',
      'Hebrew Letter Dalet With Dagesh',
    ]);
  });
});
