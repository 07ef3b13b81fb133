import { NodeSDK } from '@opentelemetry/sdk-node';

/**
 * Starts OpenTelemetry's Node SDK for the service's traces (README "Operations", "Traces"): its
 * exporter, endpoint, headers, sampler and propagators come from the standard `OTEL_*`
 * variables (the SDK reads them; `OTEL_PROPAGATORS` defaults to W3C `tracecontext,baggage`, so
 * an incoming `traceparent` is honoured). No automatic instrumentations: the spans are the
 * service's own (`app/operations/requestTraces.ts`). `OTEL_SERVICE_NAME` defaults to `loanql`.
 * Gives the function that flushes and stops it, for shutdown.
 */
export function startTracing(env: NodeJS.ProcessEnv = process.env): () => Promise<void> {
  const sdk = new NodeSDK({ instrumentations: [], ...(env.OTEL_SERVICE_NAME ? {} : { serviceName: 'loanql' }) });
  sdk.start();
  return () => sdk.shutdown();
}
