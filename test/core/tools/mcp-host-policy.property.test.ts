import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkMcpServerUrl,
  type McpHostPolicy,
  normalizeMcpAllowedHost,
} from '../../../lambdas/core/tools/mcp/mcp-host-policy.js';

// Issue #20 item 7: `localhost.`, `[::169.254.169.254]`, `[64:ff9b::a9fe:a9fe]` passed as allowed
// hosts. Every spelling the URL parser accepts of a refused address must be refused.

type Ipv4 = readonly [number, number, number, number];

const octet = fc.integer({ min: 0, max: 255 });
/** An address of 0.0.0.0/8, 127.0.0.0/8 or 169.254.0.0/16. */
const refusedIpv4: fc.Arbitrary<Ipv4> = fc.oneof(
  fc.tuple(fc.constant(0), octet, octet, octet),
  fc.tuple(fc.constant(127), octet, octet, octet),
  fc.tuple(fc.constant(169), fc.constant(254), octet, octet),
);

const toNumber = ([a, b, c, d]: Ipv4) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
const hex = (value: number, width = 1) => value.toString(16).padStart(width, '0');

/** IPv4 spellings WHATWG URL reads as the same address: parts in decimal, hex or octal, fewer parts, one number, a trailing dot. */
function ipv4Spellings(address: Ipv4): fc.Arbitrary<string> {
  const [a, b, c, d] = address;
  const part = (value: number) =>
    fc.constantFrom(
      String(value),
      `0x${hex(value)}`,
      `0X${hex(value).toUpperCase()}`,
      `0${value.toString(8)}`,
    );
  return fc.oneof(
    fc.tuple(part(a), part(b), part(c), part(d)).map((parts) => parts.join('.')),
    fc.tuple(part(a), part(b), part((c << 8) | d)).map((parts) => parts.join('.')),
    fc.tuple(part(a), part((b << 16) | (c << 8) | d)).map((parts) => parts.join('.')),
    part(toNumber(address)),
    fc.constant(`${a}.${b}.${c}.${d}.`),
  );
}

/** An IPv6 address (eight pieces) spelled fully, with leading zeros, upper case, or compressed. */
function ipv6Spelling(pieces: readonly number[]): fc.Arbitrary<string> {
  return fc.constantFrom(
    pieces.map((piece) => hex(piece)).join(':'),
    pieces.map((piece) => hex(piece, 4).toUpperCase()).join(':'),
    compress(pieces),
  );
}

function compress(pieces: readonly number[]): string {
  const text = pieces.map((piece) => hex(piece)).join(':');
  return text
    .replace(/^0:0:0:0:0:/, '::')
    .replace(/^0:0:0:0:/, '::')
    .replace(/:::+/, '::');
}

const piece = fc.integer({ min: 0, max: 0xffff });
const high = (address: number) => address >>> 16;
const low = (address: number) => address & 0xffff;

const piecesOf = (octets: readonly number[]) =>
  Array.from({ length: 8 }, (_, index) => ((octets[2 * index] ?? 0) << 8) | (octets[2 * index + 1] ?? 0));

/** The local-use NAT64 prefix 64:ff9b:1::/48, then the RFC 6052 layout of a longer prefix (`u`: the zero octet 8). */
const localNat64 = [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01];

/** Every IPv6 form that carries the IPv4 address, bracketed. */
function ipv6Embeddings(address: Ipv4): fc.Arbitrary<string> {
  const value = toNumber(address);
  const dotted = address.join('.');
  const [a, b, c, d] = address;
  const prefixByte = fc.integer({ min: 0, max: 255 });
  const forms: Array<fc.Arbitrary<string>> = [
    fc.constant(`::ffff:${dotted}`),
    fc.constant(`0:0:0:0:0:FFFF:${dotted}`),
    fc.constant(`::${dotted}`),
    fc.constant(`::ffff:0:${dotted}`),
    fc.constant(`64:ff9b::${dotted}`),
    fc.constant(`64:ff9b:1::${dotted}`),
    ipv6Spelling([0, 0, 0, 0, 0, 0xffff, high(value), low(value)]),
    ipv6Spelling([0, 0, 0, 0, 0, 0, high(value), low(value)]),
    ipv6Spelling([0, 0, 0, 0, 0xffff, 0, high(value), low(value)]),
    ipv6Spelling([0x64, 0xff9b, 0, 0, 0, 0, high(value), low(value)]),
    ipv6Spelling(piecesOf([...localNat64, a, b, 0, c, d])),
    prefixByte.chain((p) => ipv6Spelling(piecesOf([...localNat64, p, a, 0, b, c, d]))),
    fc
      .tuple(prefixByte, prefixByte)
      .chain(([p, q]) => ipv6Spelling(piecesOf([...localNat64, p, q, 0, a, b, c, d]))),
    fc
      .tuple(piece, piece)
      .map(([subnet, host]) => `2002:${hex(high(value))}:${hex(low(value))}:${hex(subnet)}::${hex(host)}`),
    fc
      .tuple(piece, piece)
      .map(([flags, port]) => `2001:0:${hex(high(value))}:${hex(low(value))}:${hex(flags)}:${hex(port)}:1:1`),
    fc
      .tuple(piece, piece, piece)
      .map(
        ([server, flags, port]) =>
          `2001:0:${hex(server)}:1:${hex(flags)}:${hex(port)}:${hex(~high(value) & 0xffff)}:${hex(~low(value) & 0xffff)}`,
      ),
    fc
      .tuple(piece, fc.constantFrom('0', '200'))
      .map(([subnet, identifier]) => `2001:db8:${hex(subnet)}::${identifier}:5efe:${dotted}`),
  ];
  return fc.oneof(...forms).map((spelling) => `[${spelling}]`);
}

const loopbackNames = fc
  .tuple(
    fc.constantFrom('localhost', 'LocalHost', 'api.localhost', 'a.b.LOCALHOST'),
    fc.constantFrom('', '.', '..'),
  )
  .map(([name, dots]) => `${name}${dots}`);

const ipv6Reserved = fc.oneof(
  fc.constantFrom(
    '[::]',
    '[::1]',
    '[0:0:0:0:0:0:0:1]',
    '[fd00:ec2::254]',
    '[FD00:EC2:0::23]',
    '[fe80::1]',
    '[FEBF::a]',
  ),
  fc
    .tuple(fc.integer({ min: 0xfe80, max: 0xfebf }), piece)
    .map(([first, last]) => `[${hex(first)}::${hex(last)}]`),
);

/** Any spelling of a host no MCP server may use, with or without a port. */
const refusedHost = fc
  .tuple(
    fc.oneof(
      refusedIpv4.chain(ipv4Spellings),
      refusedIpv4.chain(ipv6Embeddings),
      loopbackNames,
      ipv6Reserved,
    ),
    fc.constantFrom('', ':443', ':8443', ':9001'),
  )
  .map(([host, port]) => `${host}${port}`);

describe('every spelling of a refused host', () => {
  it('is refused as an allowed-hosts entry (the construct prop and the Lambdas read it so)', () => {
    fc.assert(
      fc.property(refusedHost, (entry) => {
        expect(normalizeMcpAllowedHost(entry).kind).toBe('invalid');
      }),
      { numRuns: 2_000 },
    );
  });

  it('is never reached deployed, whatever valid entries are listed', () => {
    // Prepare: a list as the construct would accept it.
    const allowedHosts = ['mcp.example.com', '10.0.0.5', '[2001:db8::5]', '8.8.8.8:8443'];
    const policy: McpHostPolicy = { allowedHosts, allowLoopback: false };

    fc.assert(
      fc.property(refusedHost, (host) => {
        expect(checkMcpServerUrl(`https://${host}/mcp`, policy).kind).toBe('not-allowed');
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('an address that embeds no refused one', () => {
  const publicIpv4 = fc
    .tuple(octet, octet, octet, octet)
    .filter(([a, b]) => a !== 0 && a !== 127 && !(a === 169 && b === 254));

  it('stays a valid entry in its plain and mapped forms', () => {
    fc.assert(
      fc.property(publicIpv4, (address) => {
        expect(normalizeMcpAllowedHost(address.join('.')).kind).toBe('valid');
        expect(normalizeMcpAllowedHost(`[::ffff:${address.join('.')}]`).kind).toBe('valid');
      }),
    );
  });
});
