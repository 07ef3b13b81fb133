/** Public surface of `app/webhooks/`: event capture set-up, endpoints, and the delivery worker. */
export { applyEventTriggers } from './eventTriggers.js';
export { checkWebhookUrl, destinationProblem, isPrivateAddress } from './destination.js';
export {
  checkWebhookId,
  createWebhookEndpoint,
  checkNewEndpoint,
  endpointsWithoutEventType,
  listWebhookDeliveries,
  listWebhookEndpoints,
  redeliverWebhookEvent,
  removeWebhookEndpoint,
  setWebhookEndpointActive,
  type CreatedWebhookEndpoint,
  type NewEndpointInput,
  type WebhookDelivery,
  type WebhookEndpoint,
} from './endpoints.js';
export { retryDelayMs, webhookSettingsFromEnv, type WebhookSettings } from './settings.js';
export { signWebhook, newSigningSecret } from './signature.js';
export { WebhookWorker, type DeliveryOutcome, type WorkerLogger } from './worker.js';
