import { startSeededService } from '../support/seededService.js';
const s = await startSeededService();
try {
  const [loan] = await s.sql<{ id: string }>(`SELECT l.id FROM loans l WHERE l.account_id = $1 AND status = 'servicing' AND EXISTS (SELECT 1 FROM schedules s WHERE s.loan_id = l.id AND s.is_next) LIMIT 1`, [s.account.id]);
  const q = `mutation($loan: uuid!, $amt: numeric!) { insert_payments_one(object: {loan_id: $loan, date: "2026-11-01", amount: $amt, type: "regular", method: "ach"}) { id amount loan { schedules(where: {is_next: {_eq: true}}) { number due } } } }`;
  const before = await s.graph(`query($id: uuid!) { loans_by_pk(id: $id) { schedules(where: {is_next: {_eq: true}}) { number due payment } } }`, { id: loan!.id });
  console.log(JSON.stringify(before.body));
  const r = await s.graph(q, { loan: loan!.id, amt: 5000 });
  console.log(r.status, r.text);
  const pid = (r.body as any).data?.insert_payments_one?.id;
  const r2 = await s.graph(`mutation($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: "2026-11-02"}) { id date_reversed loan { schedules(where: {is_next: {_eq: true}}) { number } } } }`, { id: pid });
  console.log(r2.status, r2.text);
  const r3 = await s.graph(`mutation($id: uuid!) { update_payments_by_pk(pk_columns: {id: $id}, _set: {date_reversed: null}) { id } }`, { id: pid });
  console.log(r3.status, r3.text);
  const r4 = await s.graph(`mutation { insert_addresses_one(object: {street1: "1 Main", city: "X", valuations: {data: [{value: 100000, valuation_type: "appraisal", report_date: "2026-01-01"}]}, address_details: {data: [{loan_id: "${loan!.id}"}]}}) { id street1 valuations { value } address_details { loan_id } } insert_tasks(objects: [{name: "a", loan_id: "${loan!.id}"}, {name: "b"}]) { affected_rows returning { name status } } }`);
  console.log(r4.status, r4.text);
  const r5 = await s.graph(`mutation { update_tasks(where: {name: {_eq: "a"}}, _set: {status: "completed"}) { affected_rows returning { name status } } update_tasks_many(updates: [{where: {name: {_eq: "b"}}, _set: {status: "x"}}, {where: {}, _set: {date_due: "2027-01-01"}}]) { affected_rows } delete_tasks(where: {name: {_in: ["a", "b"]}}) { affected_rows returning { name loan { id } } } }`);
  console.log(r5.status, r5.text);
  const r6 = await s.graph(`mutation { insert_payments_one(object: {loan_id: "${loan!.id}", date: "2026-11-01", amount: 0}) { id } }`);
  console.log(r6.status, r6.text);
  const r7 = await s.graph(`mutation { insert_payments_one(object: {loan_id: "00000000-0000-0000-0000-000000000000", date: "2026-11-01", amount: 1.123}) { id } }`);
  console.log(r7.status, r7.text);
  const r8 = await s.graph(`mutation { insert_payments_one(object: {loan_id: "00000000-0000-0000-0000-000000000000", date: "2026-11-01", amount: 1}) { id } }`);
  console.log(r8.status, r8.text);
  const r9 = await s.graph(`mutation { update_loans_by_pk(pk_columns: {id: "${loan!.id}"}, _set: {name: "renamed"}, _append: {custom_fields: {loan_officer: "Zed"}}) { name loan_officer updated_at } }`);
  console.log(r9.status, r9.text);
  const r10 = await s.post('/api/graph/explain', { query: `mutation { delete_tasks(where: {}) { affected_rows } }` });
  console.log(r10.status, r10.text.slice(0, 600));
} finally { await s.close(); }
