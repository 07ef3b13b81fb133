import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

/**
 * Where a webhook may go: only a global unicast address (an allow-list of what is routable on
 * the Internet, not a deny-list of what is known to be private), and never one of this host's
 * own interface addresses — unless private destinations are allowed (`WEBHOOK_ALLOW_PRIVATE=1`:
 * tests, self-hosting). The check is made on the address the socket connects to
 * (`checkedLookup` resolves the name itself), so a name that later resolves elsewhere (DNS
 * rebinding) is refused at delivery too, not only when the endpoint is created.
 *
 * IPv4: 1.0.0.0–223.255.255.255 minus the special-purpose blocks (IANA registry): 0/8, 10/8,
 * 100.64/10 (carrier-grade NAT), 127/8, 169.254/16 (link-local, cloud metadata), 172.16/12,
 * 192.0.0/24, 192.0.2/24, 198.51.100/24, 203.0.113/24 (documentation), 192.88.99/24 (6to4
 * relays), 192.168/16, 198.18/15 (benchmarking); 224/4 and 240/4 (255.255.255.255 included) are
 * outside the range.
 *
 * IPv6: 2000::/3 only, minus 2001::/23 (IETF protocol assignments: Teredo 2001::/32,
 * benchmarking, ORCHID…), 2001:db8::/32 and 3fff::/20 (documentation); 2002::/16 (6to4) is
 * judged by the IPv4 address it embeds. Outside 2000::/3 everything is refused (::, ::1, ::/96
 * IPv4-compatible, 100::/64 discard, fc00::/7, fe80::/10, fec0::/10, ff00::/8, 64:ff9b:1::/48…)
 * except the two forms that stand for an IPv4 address, judged by it: ::ffff:0:0/96 (IPv4-mapped)
 * and 64:ff9b::/96 (NAT64).
 */
const IPV4_SPECIAL: readonly (readonly [number, number, number, number, number])[] = [
  [0, 0, 0, 0, 8],
  [10, 0, 0, 0, 8],
  [100, 64, 0, 0, 10],
  [127, 0, 0, 0, 8],
  [169, 254, 0, 0, 16],
  [172, 16, 0, 0, 12],
  [192, 0, 0, 0, 24],
  [192, 0, 2, 0, 24],
  [192, 88, 99, 0, 24],
  [192, 168, 0, 0, 16],
  [198, 18, 0, 0, 15],
  [198, 51, 100, 0, 24],
  [203, 0, 113, 0, 24],
];

/** Special ranges inside 2000::/3, as [first bytes, prefix length]. */
const IPV6_SPECIAL: readonly (readonly [readonly number[], number])[] = [
  [[0x20, 0x01, 0x00, 0x00], 23],
  [[0x20, 0x01, 0x0d, 0xb8], 32],
  [[0x3f, 0xff, 0x00, 0x00], 20],
];

function inPrefix(bytes: readonly number[], network: readonly number[], prefix: number): boolean {
  for (let bit = 0; bit < prefix; bit++) {
    const mask = 0x80 >> bit % 8;
    if (((bytes[bit >> 3] ?? 0) & mask) !== ((network[bit >> 3] ?? 0) & mask)) return false;
  }
  return true;
}

/** The four bytes of a dotted IPv4 address, or null. */
function ipv4Bytes(address: string): number[] | null {
  if (isIP(address) !== 4) return null;
  return address.split('.').map(Number);
}

/** The sixteen bytes of an IPv6 address (a trailing dotted IPv4 part and a zone included), or null. */
export function ipv6Bytes(address: string): number[] | null {
  const text = address.replace(/%.*$/, '');
  if (isIP(text) !== 6) return null;
  let groups: string[];
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let head = text;
  if (dotted) {
    tail.push(...ipv4Bytes(dotted[1]!)!);
    head = text.slice(0, -dotted[1]!.length);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const wanted = 8 - tail.length / 2;
  if (head.includes('::')) {
    const [left, right] = head.split('::') as [string, string];
    const l = left ? left.split(':') : [];
    const r = right ? right.split(':') : [];
    groups = [...l, ...Array.from({ length: wanted - l.length - r.length }, () => '0'), ...r];
  } else groups = head.split(':');
  if (groups.length !== wanted) return null;
  const bytes: number[] = [];
  for (const group of groups) {
    const value = parseInt(group, 16);
    bytes.push(value >> 8, value & 255);
  }
  return [...bytes, ...tail];
}

/** This host's own interface addresses, as IPv4 text and as IPv6 bytes (hex). */
function ownAddresses(): Set<string> {
  const own = new Set<string>();
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) own.add(canonical(entry.address));
  }
  return own;
}

function canonical(address: string): string {
  const v6 = ipv6Bytes(address);
  return v6 ? v6.map((b) => b.toString(16).padStart(2, '0')).join('') : address;
}

/** Whether an IPv4 address (four bytes) is global unicast. */
function publicIpv4(bytes: readonly number[]): boolean {
  if (bytes[0]! < 1 || bytes[0]! > 223) return false;
  return !IPV4_SPECIAL.some(([a, b, c, d, prefix]) => inPrefix(bytes, [a, b, c, d], prefix));
}

/**
 * Why an address is not a destination a webhook may be sent to (a phrase), or null when it is a
 * global unicast address that is not this host's own. An IPv6 form that stands for an IPv4
 * address is judged by that address.
 */
export function destinationProblem(address: string, own: ReadonlySet<string> = ownAddresses()): string | null {
  const v4 = ipv4Bytes(address);
  if (v4) {
    if (!publicIpv4(v4)) return 'not a public (global unicast) IPv4 address';
    return own.has(address) ? "one of this host's own addresses" : null;
  }
  const v6 = ipv6Bytes(address);
  if (!v6) return 'not an IP address';
  const embedded = (from: number): string => v6.slice(from, from + 4).join('.');
  // ::ffff:a.b.c.d (IPv4-mapped) and 64:ff9b::a.b.c.d (NAT64) reach a.b.c.d.
  if (inPrefix(v6, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96) || inPrefix(v6, [0, 0x64, 0xff, 0x9b], 96)) {
    const problem = destinationProblem(embedded(12), own);
    return problem ? `${problem} (embedded ${embedded(12)})` : own.has(canonical(address)) ? "one of this host's own addresses" : null;
  }
  if (!inPrefix(v6, [0x20], 3)) return 'not a public (global unicast) IPv6 address';
  // 2002:aabb:ccdd::/48 (6to4) reaches a.b.c.d through a relay.
  if (inPrefix(v6, [0x20, 0x02], 16)) {
    const problem = destinationProblem(embedded(2), own);
    if (problem) return `${problem} (6to4 of ${embedded(2)})`;
  } else if (IPV6_SPECIAL.some(([network, prefix]) => inPrefix(v6, network, prefix))) return 'a special-purpose IPv6 address (documentation, Teredo, benchmarking…)';
  return own.has(canonical(address)) ? "one of this host's own addresses" : null;
}

/** Whether an IP address (v4 or v6, every embedded-IPv4 form decoded) is not a destination a webhook may reach. */
export function isPrivateAddress(address: string): boolean {
  return destinationProblem(address) !== null;
}

/** How a refusal names what is refused (tests and scripts match "private, loopback or link-local"). */
const NOT_PUBLIC = "an address that is not public (private, loopback or link-local, reserved, or this host's own)";

export class RefusedDestinationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedDestinationError';
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `http.request` that resolves the name and hands the socket only addresses that
 * pass the check, so the connection goes to the address that was checked.
 */
export function checkedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean } & Record<string, unknown>, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const own = ownAddresses();
      const allowed = allowPrivate ? addresses : addresses.filter((entry) => destinationProblem(entry.address, own) === null);
      if (allowed.length === 0) {
        const refused = new RefusedDestinationError(`${hostname} resolves to ${NOT_PUBLIC} (${addresses.map((a) => a.address).join(', ')}); set WEBHOOK_ALLOW_PRIVATE=1 to allow it`) as NodeJS.ErrnoException;
        return callback(refused, []);
      }
      if (options.all) return callback(null, allowed);
      return callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/**
 * Checks a webhook URL when an endpoint is created: no control character, http or https, no credentials, and a host
 * whose addresses (an IP literal, or every address the name resolves to now) are public unless
 * `allowPrivate`. Returns the problem in words, or null.
 */
export async function checkWebhookUrl(text: string, allowPrivate: boolean): Promise<string | null> {
  // The URL parser drops tabs and newlines and percent-encodes a NUL, so the text stored would not
  // be the URL checked and called (and PostgreSQL cannot store a NUL in text at all).
  if (/[\u0000-\u001f\u007f]/.test(text)) return 'must not contain control characters (NUL, tab, newline…)';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry a user name or password';
  if (text.length > 2000) return 'is longer than 2000 characters';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (allowPrivate) return null;
  const own = ownAddresses();
  if (isIP(host)) {
    const problem = destinationProblem(host, own);
    return problem ? `points to ${NOT_PUBLIC} (${host}: ${problem}); set WEBHOOK_ALLOW_PRIVATE=1 to allow it` : null;
  }
  const addresses = await new Promise<LookupAddress[] | null>((resolve) => dnsLookup(host, { all: true }, (error, found) => resolve(error ? null : found)));
  if (!addresses) return `host ${host} cannot be resolved`;
  const blocked = addresses.filter((entry) => destinationProblem(entry.address, own) !== null);
  if (blocked.length) return `host ${host} resolves to ${NOT_PUBLIC} (${blocked.map((a) => `${a.address}: ${destinationProblem(a.address, own)}`).join(', ')}); set WEBHOOK_ALLOW_PRIVATE=1 to allow it`;
  return null;
}
