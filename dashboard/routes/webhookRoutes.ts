import { Router, type Request, type Response } from 'express';
import type { Database } from '../../db/index.js';
import type { Logger } from '../../app/logger.js';
import type { EngineHolder } from '../../app/engineHolder.js';
import { UserInputError } from '../../app/errors.js';
import {
  createWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  redeliverWebhookEvent,
  setWebhookEndpointActive,
  type CreatedWebhookEndpoint,
  type WebhookEndpoint,
} from '../../app/webhooks/index.js';
import { endpointPage, endpointPath, WEBHOOKS_PATH, webhooksPage } from '../pages/webhooksPages.js';
import { errorPage } from '../pages/errorPage.js';
import { formFields, formText } from '../formFields.js';
import { setFlash, takeFlash, type FlashCookie } from '../flash.js';
import { sessionOf, type DashboardSession } from '../session.js';
import { submitOnce } from '../formOnce.js';
import { UUID } from '../servicingData.js';


/** The new endpoint and its secret, carried from the create POST to the page it redirects to, and shown there once. */
const NEW_ENDPOINT_FLASH: FlashCookie = { name: 'loanql_new_webhook', path: WEBHOOKS_PATH };

/**
 * Settings > Webhooks, scoped to the session's account (another account's endpoint is a 404, as
 * one that does not exist): add an endpoint (its secret shown once), disable or enable it, see
 * its recent deliveries and redeliver an event.
 */
export function webhookRoutes(db: Database, engines: EngineHolder, logger: Logger, allowPrivate: boolean): Router {
  const router = Router();
  const eventTypes = (): string[] => [...engines.engine.metadata.eventTypes.keys()].sort();

  router.get('/webhooks', async (req, res) => {
    const session = sessionOf(res);
    const endpoints = await listWebhookEndpoints(db, session.admin.accountId);
    // Post/Redirect/Get, as for API keys: the secret just made is in a one-time flash; a reload finds none.
    const flash = takeFlash(req, res, NEW_ENDPOINT_FLASH, session.token) as CreatedWebhookEndpoint | undefined;
    const created = flash && endpoints.some((endpoint) => endpoint.id === flash.id) ? flash : undefined;
    const createdEarlier = created ? undefined : endpoints.find((endpoint) => endpoint.id === req.query.created);
    const notice = createdEarlier
      ? `The endpoint ${createdEarlier.url} was added. Its signing secret was shown only once and cannot be shown again; if it was not copied, disable the endpoint and add another.`
      : undefined;
    res.type('html').send(webhooksPage(session.viewer, { endpoints, eventTypes: eventTypes(), allowPrivate, ...(created ? { created } : {}), ...(notice ? { notice } : {}) }));
  });

  router.post('/webhooks', async (req, res) => {
    const session = sessionOf(res);
    const url = formText(req, 'url');
    const description = formText(req, 'description');
    const chosen = formFields(req).get('events');
    const events = (Array.isArray(chosen) ? chosen : [chosen]).filter((value): value is string => typeof value === 'string');
    try {
      // Written once per form (`_once`), as a new API key: a second submission gets the first's redirect without the secret's flash.
      let created: CreatedWebhookEndpoint | undefined;
      const outcome = await submitOnce<never>(db, req, res, async (on) => {
        created = await createWebhookEndpoint(on, session.admin.accountId, { url, description, eventTypes: events }, { knownEventTypes: new Set(eventTypes()), allowPrivate });
        return { redirect: `${WEBHOOKS_PATH}?created=${encodeURIComponent(created.id)}` };
      });
      if (outcome === null || !('redirect' in outcome)) return;
      if (created) {
        logger.info({ event: 'dashboard.webhook.created', endpointId: created.id, adminId: session.admin.adminId, accountId: session.admin.accountId }, 'webhook endpoint created');
        setFlash(req, res, NEW_ENDPOINT_FLASH, session.token, created);
      }
      res.redirect(303, outcome.redirect);
    } catch (error) {
      if (!(error instanceof UserInputError)) throw error;
      res
        .status(error.status)
        .type('html')
        .send(webhooksPage(session.viewer, { endpoints: await listWebhookEndpoints(db, session.admin.accountId), eventTypes: eventTypes(), allowPrivate, error: error.message, ...(error.fields ? { fieldErrors: error.fields } : {}), form: { url, description, events } }));
    }
  });

  router.get('/webhooks/:id', async (req, res) => {
    const session = sessionOf(res);
    const endpoint = await findEndpoint(db, session, req.params.id);
    if (!endpoint) return sendNoSuchEndpoint(res, session);
    const notice = req.query.redelivered === '1' ? 'The event is queued for redelivery.' : req.query.changed === '1' ? (endpoint.active ? 'The endpoint is enabled.' : 'The endpoint is disabled.') : undefined;
    res.type('html').send(endpointPage(session.viewer, { endpoint, deliveries: await listWebhookDeliveries(db, endpoint.id, { accountId: session.admin.accountId }), ...(notice ? { notice } : {}) }));
  });

  for (const action of ['disable', 'enable'] as const) {
    router.post(`/webhooks/:id/${action}`, async (req: Request<{ id: string }>, res) => {
      const session = sessionOf(res);
      const endpoint = await findEndpoint(db, session, req.params.id);
      if (!endpoint) return sendNoSuchEndpoint(res, session);
      await setWebhookEndpointActive(db, endpoint.id, action === 'enable', session.admin.accountId);
      logger.info({ event: `dashboard.webhook.${action}d`, endpointId: endpoint.id, adminId: session.admin.adminId, accountId: session.admin.accountId }, `webhook endpoint ${action}d`);
      res.redirect(303, `${endpointPath(endpoint.id)}?changed=1`);
    });
  }

  router.post('/webhooks/:id/redeliver', async (req, res) => {
    const session = sessionOf(res);
    const endpoint = await findEndpoint(db, session, req.params.id);
    if (!endpoint) return sendNoSuchEndpoint(res, session);
    const eventId = formText(req, 'event_id');
    try {
      if (!UUID.test(eventId)) throw new UserInputError('event_id is not an event id', 400, { event_id: 'is not an event id' });
      // Once per form (`_once`): "Redeliver" sent twice queues one delivery, and both are told it is queued.
      // To this endpoint only: the account's other endpoints are not sent the event again.
      const outcome = await submitOnce<never>(db, req, res, async (on) => {
        await redeliverWebhookEvent(on, eventId, session.admin.accountId, endpoint.id);
        return { redirect: `${endpointPath(endpoint.id)}?redelivered=1` };
      });
      if (outcome === null || !('redirect' in outcome)) return;
      res.redirect(303, outcome.redirect);
    } catch (error) {
      if (!(error instanceof UserInputError)) throw error;
      res
        .status(error.status)
        .type('html')
        .send(endpointPage(session.viewer, { endpoint, deliveries: await listWebhookDeliveries(db, endpoint.id, { accountId: session.admin.accountId }), error: error.message }));
    }
  });
  return router;
}

async function findEndpoint(db: Database, session: DashboardSession, id: string): Promise<WebhookEndpoint | undefined> {
  if (!UUID.test(id)) return undefined;
  return (await listWebhookEndpoints(db, session.admin.accountId)).find((endpoint) => endpoint.id === id);
}

function sendNoSuchEndpoint(res: Response, session: DashboardSession): void {
  res.status(404).type('html').send(errorPage('No such webhook endpoint', 'This account has no webhook endpoint with that id.', session.viewer));
}

export { WEBHOOKS_PATH };
