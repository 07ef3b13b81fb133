/** GraphQL's answers in `application/json` (GraphQL over HTTP's legacy type: every GraphQL error a 200). */
export const JSON_TYPE = 'application/json; charset=utf-8';
/** GraphQL's answers in `application/graphql-response+json` (a request that could not run: a 4xx). */
export const GRAPHQL_RESPONSE_TYPE = 'application/graphql-response+json; charset=utf-8';

/**
 * The type of every answer of a GraphQL endpoint (`/api/graph`, the console's `/dashboard/graph`)
 * for a request's `Accept` — its errors included, whoever answers them: the route, the body
 * parser's handler, the rate limit, Express's last error handler (`server/createApp.ts`).
 */
export const graphResponseType = (accept: string | undefined): string => (acceptPrefersGraphQLResponse(accept) ? GRAPHQL_RESPONSE_TYPE : JSON_TYPE);

/**
 * Whether `Accept` ranks `application/graphql-response+json` above `application/json` (GraphQL
 * over HTTP: "the highest priority media type listed that is supported"): by their `q` weights,
 * an equal weight going to the one listed first. Without graphql-response+json (a wildcard, no
 * header) the answer is `application/json`. Until session 39 `q` was ignored:
 * `…graphql-response+json;q=0.5, application/json` got graphql-response+json and its 400s.
 */
export function acceptPrefersGraphQLResponse(accept = ''): boolean {
  if (!accept.toLowerCase().includes('application/graphql-response+json')) return false;
  const ranked = new Map<string, { readonly q: number; readonly at: number }>();
  for (const [at, range] of accept.split(',').entries()) {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const weight = parameters.find((parameter) => /^q\s*=/.test(parameter));
    const q = weight === undefined ? 1 : Number(weight.replace(/^q\s*=\s*/, ''));
    const seen = ranked.get(type);
    if (!seen || q > seen.q) ranked.set(type, { q: Number.isFinite(q) ? q : 0, at });
  }
  const graphQL = ranked.get('application/graphql-response+json');
  const json = ranked.get('application/json');
  if (!graphQL || graphQL.q <= 0) return false;
  return !json || graphQL.q > json.q || (graphQL.q === json.q && graphQL.at < json.at);
}
