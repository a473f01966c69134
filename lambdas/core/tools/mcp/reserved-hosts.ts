/**
 * Which hosts no MCP server of a deployment may use: the Lambda runtime API and the instance
 * metadata service live there. Each function takes `hostname` as the WHATWG URL parser gives it
 * (`new URL(...).hostname`): an IPv4 address in dotted decimal whatever its spelling (`0x7f.1`,
 * `2130706433`), an IPv6 address in brackets, compressed, lower case and all in hex
 * (`[::ffff:a9fe:a9fe]`), a name in lower case. So only canonical forms are read here; the
 * parser, not this file, knows every spelling.
 */

/** 0.0.0.0/8 (this network), 127.0.0.0/8 (loopback), 169.254.0.0/16 (link-local: instance metadata, ECS, DNS, NTP). */
function isReservedIpv4(address: number): boolean {
  const first = address >>> 24;
  const second = (address >>> 16) & 0xff;
  return first === 0 || first === 127 || (first === 169 && second === 254);
}

/**
 * True for a loopback host as a local server would be reached: `localhost`, a name under it,
 * 127.0.0.0/8, `[::1]` and the IPv4-mapped form of 127.0.0.0/8.
 *
 * @example
 * isLoopbackHost(new URL('http://127.1:4123/').hostname); // true
 */
export function isLoopbackHost(hostname: string): boolean {
  const name = hostname.replace(/(?<!\.)\.+$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  const ipv4 = readIpv4(hostname);
  if (ipv4 !== undefined) return ipv4 >>> 24 === 127;
  const pieces = readIpv6(hostname);
  if (pieces === undefined) return false;
  if (pieces.slice(0, 7).every((piece) => piece === 0) && pieces[7] === 1) return true;
  const mapped = pieces.slice(0, 5).every((piece) => piece === 0) && pieces[5] === 0xffff;
  return mapped && (pieces[6] ?? 0) >>> 8 === 127;
}

/**
 * True for a host no MCP server may use: a loopback name (`localhost`, `*.localhost`, with any
 * trailing dots), a reserved IPv4 address, `[::]`, `[::1]`, link-local `fe80::/10`, AWS's
 * `fd00:ec2::/32` (metadata, DNS, NTP over IPv6), and every IPv6 form that carries a reserved
 * IPv4 address: IPv4-compatible (`::/96`), -mapped (`::ffff:0:0/96`), -translated
 * (`::ffff:0:0:0/96`), NAT64 (`64:ff9b::/96` and every layout of `64:ff9b:1::/48`), 6to4
 * (`2002::/16`), Teredo (`2001::/32`, server or client) and ISATAP (`…:5efe:a.b.c.d`).
 *
 * @example
 * isReservedHost(new URL('https://[64:ff9b::169.254.169.254]/').hostname); // true
 */
export function isReservedHost(hostname: string): boolean {
  if (isLoopbackHost(hostname)) return true;
  const ipv4 = readIpv4(hostname);
  if (ipv4 !== undefined) return isReservedIpv4(ipv4);
  const pieces = readIpv6(hostname);
  if (pieces === undefined) return false;
  const [first = 0, second = 0] = pieces;
  if (pieces.every((piece) => piece === 0)) return true;
  if ((first & 0xffc0) === 0xfe80) return true;
  if (first === 0xfd00 && second === 0x0ec2) return true;
  return embeddedIpv4Addresses(pieces).some(isReservedIpv4);
}

/** The IPv4 addresses an IPv6 address carries by each standard embedding it matches. */
function embeddedIpv4Addresses(pieces: readonly number[]): number[] {
  const piece = (index: number) => pieces[index] ?? 0;
  const ipv4 = (high: number, low: number) => ((high << 16) | low) >>> 0;
  const zeroUpTo = (end: number) => pieces.slice(0, end).every((value) => value === 0);
  const last = ipv4(piece(6), piece(7));
  const found: number[] = [];
  // ::a.b.c.d (compatible), ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated).
  if (
    zeroUpTo(6) ||
    (zeroUpTo(5) && piece(5) === 0xffff) ||
    (zeroUpTo(4) && piece(4) === 0xffff && piece(5) === 0)
  )
    found.push(last);
  if (piece(0) === 0x64 && piece(1) === 0xff9b) {
    if (piece(2) === 0 && piece(3) === 0 && piece(4) === 0 && piece(5) === 0) found.push(last);
    // RFC 8215's local-use prefix may be /48 to /96: every RFC 6052 layout, so none slips through.
    if (piece(2) === 1) {
      const byte = (index: number) =>
        index % 2 === 0 ? piece(index / 2) >>> 8 : piece((index - 1) / 2) & 0xff;
      const octets = (indexes: number[]) =>
        indexes.reduce((address, index) => address * 256 + byte(index), 0);
      found.push(octets([6, 7, 9, 10]), octets([7, 9, 10, 11]), octets([9, 10, 11, 12]), last);
    }
  }
  if (piece(0) === 0x2002) found.push(ipv4(piece(1), piece(2)));
  if (piece(0) === 0x2001 && piece(1) === 0) found.push(ipv4(piece(2), piece(3)), ~last >>> 0);
  if ((piece(4) & 0xfcff) === 0 && piece(5) === 0x5efe) found.push(last);
  return found;
}

/** A dotted-decimal IPv4 hostname as a 32-bit number; the URL parser wrote it, so four decimal parts. */
function readIpv4(hostname: string): number | undefined {
  const parts = hostname.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part))) return undefined;
  return parts.reduce((address, part) => address * 256 + Number(part), 0);
}

/** The eight 16-bit pieces of a bracketed IPv6 hostname as the URL parser serialises it (hex, one `::` at most). */
function readIpv6(hostname: string): number[] | undefined {
  if (!hostname.startsWith('[') || !hostname.endsWith(']')) return undefined;
  const [head = '', tail] = hostname.slice(1, -1).split('::');
  const read = (text: string) =>
    text === '' ? [] : text.split(':').map((piece) => Number.parseInt(piece, 16));
  const before = read(head);
  const after = tail === undefined ? [] : read(tail);
  const omitted = 8 - before.length - after.length;
  if (omitted < 0 || (tail === undefined && omitted !== 0)) return undefined;
  const pieces = [...before, ...Array<number>(omitted).fill(0), ...after];
  return pieces.every((piece) => piece >= 0 && piece <= 0xffff) ? pieces : undefined;
}
