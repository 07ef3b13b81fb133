import { Router, type Response } from 'express';
import type { Database } from '../../db/index.js';
import { errorPage } from '../pages/errorPage.js';
import { peopleListHref, peopleListPage, personPage } from '../pages/peoplePages.js';
import { row, rows, text } from '../pages/servicingFormat.js';
import { UUID, type ServicingData } from '../servicingData.js';
import { sessionOf } from '../session.js';
import { containsPattern, notFoundPage } from './loanRoutes.js';

const PAGE_SIZE = 25;
const PERSON_FIELDS = 'id name email entity_type status is_borrower is_investor';
const SEARCH = '{_or: [{name: {_ilike: $q}}, {email: {_ilike: $q}}]}';
const peopleDocument = (search: boolean) => `query People($limit: Int!, $offset: Int!${search ? ', $q: String!' : ''}) {
  people(${search ? `where: ${SEARCH}, ` : ''}order_by: [{name: asc}, {id: asc}], limit: $limit, offset: $offset) { ${PERSON_FIELDS} }
  total: people_aggregate${search ? `(where: ${SEARCH})` : ''} { aggregate { count } }
}`;
const PEOPLE = peopleDocument(false);
const PEOPLE_SEARCH = peopleDocument(true);
const LOAN = 'loan { id name status amount date_maturity }';
const PERSON = `query Person($id: uuid!) {
  person: people_by_pk(id: $id) {
    ${PERSON_FIELDS} phone
    borrows(order_by: [{created_at: desc}, {id: asc}]) { ${LOAN} }
    guarantees(order_by: [{created_at: desc}, {id: asc}]) { ${LOAN} }
    funding_sources(order_by: [{date_funded: desc_nulls_last}, {id: asc}]) { class original_amount ${LOAN} }
  }
}`;

/** People (issue 17): the list with its search, and a person's page with the loans they borrow, guarantee and fund. */
export function peopleRoutes(db: Database, data: () => Promise<ServicingData>): Router {
  const router = Router();
  const run = async (res: Response, query: string, variables: Record<string, unknown>) => (await data()).run(db, sessionOf(res).admin.accountId, query, variables);

  router.get('/', async (req, res) => {
    const session = sessionOf(res);
    const query = new Map(Object.entries(req.query));
    const q = query.get('q') ?? '';
    const pageText = query.get('page') ?? '1';
    const refuse = (parameter: string, problem: string) =>
      res.status(400).type('html').send(errorPage('The list of people could not be shown', `The parameter “${parameter}” is wrong: ${problem}.`, session.viewer));
    if (typeof q !== 'string' || q.length > 200 || q.includes('\u0000')) return refuse('q', 'expected one text of at most 200 characters');
    const page = typeof pageText === 'string' && /^\d{1,7}$/.test(pageText) ? Number(pageText) : NaN;
    if (!(page >= 1)) return refuse('page', 'expected a whole number from 1 to 9999999');
    const search = q.trim();
    const result = await run(res, search ? PEOPLE_SEARCH : PEOPLE, { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE, ...(search ? { q: containsPattern(search) } : {}) });
    const total = Number(text(row(row(result.total)?.aggregate)?.count));
    // A page past the last (the list shrank since the link was made): the last page instead, as
    // the loans and investors lists do (it said "People 51–3 of 3" and "Page 3 of 1").
    const last = Math.max(1, Math.ceil(total / PAGE_SIZE));
    if (page > last) return res.redirect(303, peopleListHref(search, last));
    res.type('html').send(peopleListPage(session.viewer, { people: rows(result.people), total, search, page, pageSize: PAGE_SIZE }));
  });

  router.get('/:id', async (req, res) => {
    const id = String(req.params.id);
    const person = UUID.test(id) ? row((await run(res, PERSON, { id })).person) : null;
    if (!person) return notFoundPage(res, 'person');
    res.type('html').send(personPage(sessionOf(res).viewer, person));
  });
  return router;
}
