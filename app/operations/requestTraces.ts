import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import type { EngineFacts } from '../../engine/index.js';

/**
 * Whether the service traces requests (README "Operations", "Traces"): when the standard
 * OpenTelemetry variables ask for an exporter — `OTEL_TRACES_EXPORTER` naming `otlp`, `zipkin` or
 * `console`, or an OTLP endpoint — and `OTEL_SDK_DISABLED` is not `true`. Off otherwise, and then
 * the server creates no span objects at all. Throws, naming the variable, for an exporter name
 * the SDK does not know.
 */
export function tracingWantedByEnv(env: NodeJS.ProcessEnv): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  const raw = env.OTEL_TRACES_EXPORTER ?? '';
  // As the SDK reads it: comma-separated names, spaces around them ignored, case kept.
  const names = raw.split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (names.length > 0) {
    // A name the SDK does not know (`otlp-http`, `OTLP`, `jaeger`, which it no longer has) it
    // skips with a warning, so requests were traced and nothing exported; `none` with another
    // name it reads as nothing (first) or as `otlp` (later). Refused at start instead.
    if (names.some((name) => !TRACE_EXPORTERS.includes(name)) || (names.includes('none') && names.length > 1)) {
      throw new Error(`OTEL_TRACES_EXPORTER must be ${TRACE_EXPORTERS.filter((name) => name !== 'none').join(', ')} (one or more, comma-separated) or none alone, not ${JSON.stringify(raw.trim().slice(0, 40))}`);
    }
    return names[0] !== 'none';
  }
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** The trace exporters OpenTelemetry's Node SDK (the pinned version) knows by name. */
const TRACE_EXPORTERS: readonly string[] = ['otlp', 'zipkin', 'console', 'none'];

/** What a finished request tells its trace; none of it is a value of the request. */
export interface TracedOutcome {
  /** The route template (`POST /api/graph`), never the path. */
  readonly route: string;
  readonly status: number;
  readonly engine: EngineFacts;
}

/** One request's trace while it runs: `end` once it is answered. */
export interface RequestTrace {
  end(outcome: TracedOutcome): void;
}

/** The names of a request's child spans, in the order they happen. */
export const SPAN_NAMES = { parse: 'graphql.parse', plan: 'graphql.plan', admission: 'loanql.admission', statement: 'db.statement', response: 'http.response' } as const;

/**
 * Traces of requests (issue 35) through the OpenTelemetry API, with whatever tracer provider and
 * propagator the process registered (`server/tracing.ts` starts the Node SDK from `OTEL_*`):
 * a SERVER span per request, the child of the incoming `traceparent` when there is one, and
 * child spans for the engine's phases — parse/validate, plan (variables, plan, compile, bind),
 * admission by cost (a query with a statement, when admission is on: its wait, ~0 in the cheap lane), the statement — and the response (from the
 * engine's last phase to the response handed to the connection). Attributes are a closed set:
 * the route template, the status, the operation's type and name (a GraphQL Name of the
 * document), the document's and the statement's SHA-256 prefixes, the plan cache's answer and
 * the estimated cost; never a path, a value, a variable or a key.
 */
export class RequestTraces {
  readonly #tracer: Tracer;

  constructor(tracer: Tracer = trace.getTracer('loanql')) {
    this.#tracer = tracer;
  }

  /** Starts the trace of a request that arrived at `startedAt` (`performance.now()`), feeding it the engine's phases. */
  begin(headers: IncomingHttpHeaders, method: string, startedAt: number, engine: EngineFacts): RequestTrace {
    const parent = propagation.extract(ROOT_CONTEXT, headers);
    const root = this.#tracer.startSpan(method, { kind: SpanKind.SERVER, startTime: epochMs(startedAt), attributes: { 'http.request.method': method } }, parent);
    const inRoot = trace.setSpan(parent, root);
    let parsedAt: number | null = null;
    let lastPhaseEnd = startedAt;
    const child = (name: string, from: number, to: number, attributes: Record<string, string | number | boolean> = {}): void => {
      this.#tracer.startSpan(name, { startTime: epochMs(from), attributes }, inRoot).end(epochMs(to));
      if (to > lastPhaseEnd) lastPhaseEnd = to;
    };
    engine.phase = (phase, from, to) => {
      if (phase === 'parse') {
        parsedAt = to;
        child(SPAN_NAMES.parse, from, to, engine.planCacheHit === null ? {} : { 'loanql.plan_cache.hit': engine.planCacheHit });
      } else if (phase === 'prepare') {
        // A document refused before its operation was known never reached planning.
        if (engine.operationType !== null) child(SPAN_NAMES.plan, parsedAt ?? from, to, operationAttributes(engine));
      }
      else if (phase === 'admission') child(SPAN_NAMES.admission, from, to);
      else child(SPAN_NAMES.statement, from, to, statementAttributes(engine));
    };
    return {
      end: ({ route, status, engine: facts }) => {
        const now = performance.now();
        child(SPAN_NAMES.response, lastPhaseEnd, now, { 'http.response.status_code': status });
        root.updateName(route);
        root.setAttributes({ 'http.route': route, 'http.response.status_code': status, ...operationAttributes(facts) });
        if (status >= 500) root.setStatus({ code: SpanStatusCode.ERROR });
        root.end(epochMs(now));
      },
    };
  }
}



/**
 * A `performance.now()` reading as epoch milliseconds: the SDK reads a small number as a
 * performance reading but corrects an end time (not a start time) for the drift between the
 * monotonic and the wall clock, so a child's start could fall before its predecessor's end.
 */
const epochMs = (reading: number): number => performance.timeOrigin + reading;

function operationAttributes(engine: EngineFacts): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  if (engine.operationType) attributes['graphql.operation.type'] = engine.operationType;
  if (engine.operationName) attributes['graphql.operation.name'] = engine.operationName;
  if (engine.documentHash) attributes['graphql.document.hash'] = engine.documentHash;
  if (engine.cost !== null) attributes['loanql.query.cost'] = engine.cost;
  return attributes;
}

function statementAttributes(engine: EngineFacts): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = { 'db.system.name': 'postgresql' };
  if (engine.operationName) attributes['graphql.operation.name'] = engine.operationName;
  if (engine.operationType) attributes['graphql.operation.type'] = engine.operationType;
  if (engine.statementHash) attributes['db.query.hash'] = engine.statementHash;
  return attributes;
}

