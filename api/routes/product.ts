import { Router, type Request, type Response } from 'express';
import { LosslessNumber, stringify } from 'lossless-json';
import type { Database } from '../../db/index.js';
import type { EngineHolder } from '../../app/engineHolder.js';
import { loadDefaultProduct, productFieldListing } from '../../app/products.js';
import { PRODUCT_SETTINGS, readProductSettings, updateProductSettings, type ProductSettings, type SettingValue } from '../../app/productSettings.js';
import { ADMIN_ROLE } from '../../metadata/index.js';
import { notAuthorized } from '../authenticate.js';
import { roleWith } from '../keyRole.js';
import { methodNotAllowed } from '../methodNotAllowed.js';
import { queryParameters } from '../../http/queryParameters.js';
import type { ReadRouting } from '../readRouting.js';

/** A setting's value as the answer carries it: decimals as JSON numbers with their exact digits. */
function jsonValue(setting: (typeof PRODUCT_SETTINGS)[number], value: SettingValue): unknown {
  return setting.kind.kind === 'decimal' && typeof value === 'string' ? new LosslessNumber(value) : value;
}

function settingsJson(settings: ProductSettings | null): Record<string, unknown> {
  return Object.fromEntries(PRODUCT_SETTINGS.map((setting) => [setting.name, jsonValue(setting, settings ? settings.get(setting.name)! : setting.default)]));
}

/** The default product as `GET /api/product` answers it: settings, their defaults, and its fields. */
async function productJson(db: Database, accountId: string, settings: { productId: string; settings: ProductSettings }, extra: Record<string, unknown> = {}): Promise<string> {
  const product = await loadDefaultProduct(db, accountId);
  return stringify({
    product: {
      id: settings.productId,
      settings: settingsJson(settings.settings),
      defaults: settingsJson(null),
      fields: productFieldListing(product).map((field) => ({
        body_key: field.bodyKey,
        type: field.type,
        required: field.required,
        default: field.defaultValue,
        options: field.options,
        stored_in: field.storedIn,
        custom: field.custom,
      })),
    },
    ...extra,
  })!;
}

/** A request with no body at all is `{}`, like `/api/loan`'s. */
function bodyOf(req: Request): unknown {
  return req.body === undefined ? {} : req.body;
}

function sendJson(res: Response, status: number, text: string): void {
  res.status(status).type('application/json').send(text);
}

/**
 * `/api/product` (SPEC §12 "Settings per product", issue 29): the account's default product.
 * GET: any key whose role reads loans (the settings decide what its loans owe); PATCH: the
 * account's admin keys only (a change replays every loan of the product). Every rule is in
 * `app/productSettings.ts`.
 */
/**
 * With read replicas (`routing`), a settings change — it replays the product's loans, so their
 * stored ledgers change — is recorded as the key's last write and answered with
 * `LoanQL-Consistency`, as a loan write is: the key's next read sees it (docs/scaling.md).
 */
export function productRoutes(db: Database, engines: EngineHolder, routing?: ReadRouting): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    if (!roleWith(engines, res, 'select', '/api/product')) return;
    queryParameters(req.query, []);
    const accountId = res.locals.auth.accountId;
    sendJson(res, 200, await productJson(db, accountId, await readProductSettings(db, accountId)));
  });

  router.patch('/', async (req, res) => {
    const role = engines.engine.metadata.roles.get(res.locals.auth.role);
    if (!role) return notAuthorized(res);
    if (role.name !== ADMIN_ROLE) {
      return void res.status(403).json({
        error: `changing the product's settings is for the account's admin keys; this key's role is ${role.name}`,
        role: role.name,
        permission: 'product.update',
        code: 'permission-denied',
      });
    }
    const accountId = res.locals.auth.accountId;
    const updated = await updateProductSettings(db, accountId, bodyOf(req));
    if (routing) await routing.wrote(res.locals.auth, res).catch(() => undefined);
    sendJson(res, 200, await productJson(db, accountId, updated, { changed: updated.changed, replayed_loans: updated.replayedLoans }));
  });

  router.all('/', methodNotAllowed('GET', 'PATCH'));
  return router;
}
