import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may go. Private, loopback, link-local (cloud metadata: 169.254.169.254),
 * carrier-grade NAT, multicast and reserved addresses are refused unless private destinations
 * are allowed (`WEBHOOK_ALLOW_PRIVATE=1`). The check is made on the address the socket connects
 * to (`checkedLookup` resolves the name itself), so a name that later resolves elsewhere
 * (DNS rebinding) is refused at delivery too, not only when the endpoint is created.
 */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv6');

/** Whether an IP address (v4 or v6, IPv4-mapped included) is not a public destination. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return isPrivateAddress(mapped[1]!);
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family === 6) {
    const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
    if (hexMapped) {
      const high = parseInt(hexMapped[1]!, 16);
      const low = parseInt(hexMapped[2]!, 16);
      return isPrivateAddress(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
    }
    return BLOCKED.check(address, 'ipv6');
  }
  return true;
}

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
      const allowed = allowPrivate ? addresses : addresses.filter((entry) => !isPrivateAddress(entry.address));
      if (allowed.length === 0) {
        const refused = new RefusedDestinationError(`${hostname} resolves to a private, loopback or link-local address (${addresses.map((a) => a.address).join(', ')}); set WEBHOOK_ALLOW_PRIVATE=1 to allow it`) as NodeJS.ErrnoException;
        return callback(refused, []);
      }
      if (options.all) return callback(null, allowed);
      return callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/**
 * Checks a webhook URL when an endpoint is created: http or https, no credentials, and a host
 * whose addresses (an IP literal, or every address the name resolves to now) are public unless
 * `allowPrivate`. Returns the problem in words, or null.
 */
export async function checkWebhookUrl(text: string, allowPrivate: boolean): Promise<string | null> {
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
  if (isIP(host)) return isPrivateAddress(host) ? `points to a private, loopback or link-local address (${host}); set WEBHOOK_ALLOW_PRIVATE=1 to allow it` : null;
  const addresses = await new Promise<LookupAddress[] | null>((resolve) => dnsLookup(host, { all: true }, (error, found) => resolve(error ? null : found)));
  if (!addresses) return `host ${host} cannot be resolved`;
  const blocked = addresses.filter((entry) => isPrivateAddress(entry.address));
  if (blocked.length) return `host ${host} resolves to a private, loopback or link-local address (${blocked.map((a) => a.address).join(', ')}); set WEBHOOK_ALLOW_PRIVATE=1 to allow it`;
  return null;
}
