/**
 * SCALING.md's "Customers and account quotas" table comes from
 * scripts/quota-model.ts: this keeps the two equal and pins what it promises.
 */
import { readFileSync } from 'node:fs';
import { stages } from '../../lib/stage-config';
import {
  accountQuotas,
  QUOTA_BEGIN_MARKER,
  QUOTA_END_MARKER,
  quotaBindsAt,
  quotaRows,
  renderQuotaTables,
  scalingDocumentPath,
  stageThrottleShare,
  withQuotaTables,
} from '../../scripts/quota-model';

const document = readFileSync(scalingDocumentPath, 'utf8');
const row = (name: string) => quotaRows().find((candidate) => candidate.name === name)!;

test('SCALING.md shows the quota table the model computes (regenerate: npm run capacity)', () => {
  expect(document).toContain(QUOTA_BEGIN_MARKER);
  expect(document).toContain(QUOTA_END_MARKER);
  expect(withQuotaTables(document, renderQuotaTables())).toBe(document);
});

test('API keys: fixed-plan customers take none, so the quota AWS never raises binds only past 1000×', () => {
  const apiKeys = row('API Gateway API keys');
  expect(apiKeys.raisable).toBe(false);
  expect(apiKeys.limit).toBe(accountQuotas.apiKeys);
  expect(quotaBindsAt(apiKeys)).toBeGreaterThan(1000);
  expect(apiKeys.load(1000)).toBeLessThan(apiKeys.limit);
});

test('the stage throttle grows with the customer mix: it never binds', () => {
  expect(stageThrottleShare()).toBeLessThan(1);
  expect(renderQuotaTables()).toMatch(/\| production stage throttle \(ours\) \|[^\n]*\| never \|/);
  expect(stages.production.throttle.rateLimit).toBeGreaterThan(3_000);
});

test("usage plans: the pooled keys' limit nothing one customer could use up for the others; only Enterprise keys have limits, their own", () => {
  expect(row('API Gateway usage plans').note).toContain("the pooled keys' (metering only: no throttle, no quota)");
  expect(renderQuotaTables()).toMatch(
    /\| production stage throttle \(ours\) \|[^\n]*Shared by every customer: one key's flood spends it unless WAF's per-key rule/,
  );
});

test('the raisable quotas are listed apart, in the order growth reaches them', () => {
  const text = renderQuotaTables();
  expect(text).toMatch(
    /^Quotas AWS raises on request, in the order growth reaches them: API Gateway throttle, account and Region .*usage plans.*Lambda concurrency/m,
  );
  expect(text).toMatch(/^Quotas AWS never raises: API Gateway API keys/m);
  expect(quotaBindsAt(row('API Gateway throttle, account and Region'))).toBeLessThan(quotaBindsAt(row('API Gateway usage plans')));
});
