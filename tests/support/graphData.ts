/**
 * The GraphQL `data` of a request that must succeed (no `errors`, asserted), or its whole answer,
 * posted to a test service's `/api/graph` with an API key; and money as exact cents. Shared by the ledger and
 * distribution tests, which read amounts as the strings PostgreSQL gives.
 */
import assert from 'node:assert/strict';

export async function graphData(url: string, key: string, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const body = await graphBody(url, key, query, variables);
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

/** The whole GraphQL answer (`data` and `errors`) of a request posted with an API key, for a test that expects a refusal. */
export async function graphBody(url: string, key: string, query: string, variables: Record<string, unknown> = {}): Promise<{ data?: any; errors?: any }> {
  const response = await fetch(`${url}/api/graph`, {
    method: 'POST',
    headers: { authorization: `Token ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as { data?: any; errors?: any };
}

/** `"-12.3"` (or an exact JSON number's text) → -1230n: a money amount as cents, exactly. */
export function cents(given: string | { readonly text: string }): bigint {
  const money = typeof given === 'string' ? given : given.text;
  const [whole, fraction = ''] = money.replace('-', '').split('.');
  const value = BigInt(whole!) * 100n + BigInt((fraction + '00').slice(0, 2));
  return money.startsWith('-') ? -value : value;
}
