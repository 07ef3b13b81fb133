/**
 * The query console: GraphiQL against the admin's own account (through the dashboard's
 * session + CSRF endpoints, never an API key), beside a panel with the one SQL statement the
 * last query compiled to, its parameters and PostgreSQL's plan (`/dashboard/graph/explain`).
 */
import { GraphiQL, type GraphiQLProps } from 'graphiql';
import { GraphQLString, Kind, parse, type OperationDefinitionNode } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import { StrictMode, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import 'graphiql/graphiql.css';
import './console.css';
import { keepConsoleAccessible } from './consoleAccessibility.js';
import { ResponseText } from './exactResult.js';
import { formatPlan } from './formatPlan.js';
import { formatSql } from './formatSql.js';

/**
 * interface.md writes `status: {_neq: completed}`, a bare word where a String goes, and the
 * server reads such a word as that string (`engine/validation/bareWordsAsStrings.ts`). The
 * editor's linter (graphql-js validation in this bundle) is taught the same, so the documented
 * form is not underlined in red: String accepts an enum-value literal as its text. Only this
 * page's copy of graphql-js is changed.
 */
const parseStringLiteral = GraphQLString.parseLiteral;
GraphQLString.parseLiteral = (node, variables) => (node.kind === Kind.ENUM ? node.value : parseStringLiteral(node, variables));

const DEFAULT_QUERY = `# Queries and mutations run against your own account (a mutation writes: one transaction).
# Run one with Ctrl+Enter (or the ▶ button); the panel on the right shows its SQL.
query FirstLoans {
  loans(limit: 5, order_by: {created_at: desc}) {
    id
    name
    status
    amount
  }
  loans_aggregate {
    aggregate {
      count
    }
  }
}
`;

type Explained =
  | { readonly state: 'idle' }
  | { readonly state: 'loading' }
  | { readonly state: 'done'; readonly sql: string; readonly params: readonly unknown[]; readonly plan: unknown }
  | { readonly state: 'failed'; readonly message: string };

type Fetcher = GraphiQLProps['fetcher'];
type FetcherParams = Parameters<Fetcher>[0];

class SessionEndedError extends Error {}

function csrfToken(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? '';
}

/** Posts to the console's endpoints; the answer's text, as the server sent it. */
async function postForText(path: string, body: unknown): Promise<string> {
  const response = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': csrfToken() },
    body: JSON.stringify(body),
  });
  if (response.status === 401) throw new SessionEndedError('Your dashboard session has ended. Reload the page to log in again.');
  return response.text();
}

async function postJson(path: string, body: unknown): Promise<unknown> {
  return JSON.parse(await postForText(path, body)) as unknown;
}

function errorMessage(body: unknown): string | null {
  const errors = (body as { errors?: readonly { message?: string }[] } | null)?.errors;
  return errors?.length ? errors.map((error) => error.message ?? 'error').join('\n') : null;
}

/**
 * Whether the operation GraphiQL runs is a `subscription` (a document that does not parse is
 * sent over HTTP, which reports the error).
 */
function isSubscription(params: FetcherParams): boolean {
  try {
    const operations = parse(params.query).definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
    const chosen = params.operationName ? operations.find((operation) => operation.name?.value === params.operationName) : operations[0];
    return chosen?.operation === 'subscription';
  } catch {
    return false;
  }
}

/**
 * The console's WebSocket (`/dashboard/graph`, graphql-transport-ws): authenticated by the
 * session cookie and the page's CSRF token in `connection_init`; opened at the first
 * subscription, closed when the last ends. Results are parsed by graphql-ws, so a subscription's
 * numbers show as JavaScript reads them (a query's keep PostgreSQL's digits: exactResult.ts).
 */
let socketClient: Client | null = null;
function consoleSocket(): Client {
  socketClient ??= createClient({
    url: `${window.location.protocol === 'https:' ? 'wss' : 'ws'}://${window.location.host}/dashboard/graph`,
    connectionParams: () => ({ csrfToken: csrfToken() }),
    retryAttempts: 0,
  });
  return socketClient;
}

function isIntrospection(params: FetcherParams): boolean {
  return params.operationName === 'IntrospectionQuery';
}

function ConsoleApp() {
  const [explained, setExplained] = useState<Explained>({ state: 'idle' });
  const initialQuery = useMemo(() => new URLSearchParams(window.location.search).get('query') ?? undefined, []);

  // Stable for the page's life: GraphiQL refetches the schema whenever its fetcher changes.
  const fetcher = useMemo<Fetcher>(
    () => async (params) => {
      if (isSubscription(params)) {
        // The results as they come; GraphiQL's stop button (or a new run) ends the iteration, and with it the subscription.
        setExplained({ state: 'idle' });
        // GraphiQL awaits the fetcher's answer, then reads an async iterable result by result.
        const results = consoleSocket().iterate({ query: params.query, ...(params.operationName ? { operationName: params.operationName } : {}), ...(params.variables ? { variables: params.variables } : {}) });
        return results as unknown as Record<string, unknown>;
      }
      if (!isIntrospection(params)) {
        setExplained({ state: 'loading' });
        postJson('/dashboard/graph/explain', params).then(
          (body) => {
            const problem = errorMessage(body);
            if (problem) return setExplained({ state: 'failed', message: problem });
            const { sql, params: values, plan } = body as { sql: string; params: unknown[]; plan: unknown };
            setExplained({ state: 'done', sql, params: values, plan });
          },
          (error: unknown) => setExplained({ state: 'failed', message: error instanceof Error ? error.message : String(error) }),
        );
      }
      try {
        // The schema's introspection is read by GraphiQL; every other answer goes to the result
        // pane as the text the server sent (numbers with their exact digits, see exactResult.ts).
        if (isIntrospection(params)) return (await postJson('/dashboard/graph', params)) as Record<string, unknown>;
        return new ResponseText(await postForText('/dashboard/graph', params)) as unknown as Record<string, unknown>;
      } catch (error) {
        return { errors: [{ message: error instanceof Error ? error.message : String(error) }] };
      }
    },
    [],
  );

  return (
    <div className="console">
      <div className="console-editor">
        <GraphiQL fetcher={fetcher} defaultQuery={DEFAULT_QUERY} query={initialQuery} isHeadersEditorEnabled={false} shouldPersistHeaders={false} />
      </div>
      <SqlPanel explained={explained} />
    </div>
  );
}

function SqlPanel({ explained }: { readonly explained: Explained }) {
  return (
    <aside className="sql-panel" aria-labelledby="sql-panel-heading" aria-busy={explained.state === 'loading'}>
      <h2 id="sql-panel-heading">SQL of the last query</h2>
      <p className="visually-hidden" role="status">
        {explained.state === 'done' ? 'The SQL panel shows the last query.' : ''}
      </p>
      {explained.state === 'idle' && <p className="sql-panel-hint">Run a query to see the one SQL statement it compiles to, its parameters and its plan.</p>}
      {explained.state === 'loading' && <p className="sql-panel-hint">Compiling…</p>}
      {explained.state === 'failed' && (
        <p className="sql-panel-error" role="alert">
          {explained.message}
        </p>
      )}
      {explained.state === 'done' && explained.sql === '' && <p className="sql-panel-hint">This query needs no SQL: it only asks about the schema.</p>}
      {explained.state === 'done' && explained.sql !== '' && (
        <>
          <div className="sql-panel-heading-row">
            <h3>Statement</h3>
            <CopyButton text={formatSql(explained.sql)} label="Copy SQL" />
          </div>
          <pre id="sql-statement" tabIndex={0}>
            {formatSql(explained.sql)}
          </pre>
          <h3>Parameters</h3>
          <pre id="sql-params" tabIndex={0}>
            {explained.params.length ? explained.params.map((value, index) => `$${index + 1} = ${JSON.stringify(value)}`).join('\n') : '(none)'}
          </pre>
          <h3>Plan</h3>
          <pre id="sql-plan" tabIndex={0}>
            {formatPlan(explained.plan)}
          </pre>
        </>
      )}
    </aside>
  );
}

/** Copies `text` to the clipboard; says whether it worked in a live region beside it. */
function CopyButton({ text, label }: { readonly text: string; readonly label: string }) {
  const [status, setStatus] = useState('');
  const copy = (): void => {
    const copied = navigator.clipboard?.writeText(text) ?? Promise.reject(new Error('no clipboard'));
    copied.then(
      () => setStatus('Copied.'),
      () => setStatus('Could not copy: select the statement and press Ctrl+C.'),
    );
  };
  return (
    <span className="copy">
      <button type="button" className="copy-button" onClick={copy}>
        {label}
      </button>
      <span className="copy-status" role="status">
        {status}
      </span>
    </span>
  );
}

const root = document.getElementById('console-root');
if (root) {
  keepConsoleAccessible(root);
  createRoot(root).render(
    <StrictMode>
      <ConsoleApp />
    </StrictMode>,
  );
}
