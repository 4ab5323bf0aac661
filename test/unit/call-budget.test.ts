import { CALL_BUDGET_VARIABLE, callBudgetFromEnvironment, DYNAMODB_CALL_BUDGET } from '../../functions/runtime/dependencies';

/** The deployed budget unless the local runtime names another (tests on a loaded machine); a bad value stops the function at init. */
it('is the deployed budget when the variable is unset, as in every deployed function', () => {
  expect(callBudgetFromEnvironment({})).toEqual(DYNAMODB_CALL_BUDGET);
});

it("takes the local runtime's budget", () => {
  const relaxed = { connectionTimeoutMs: 5_000, requestTimeoutMs: 15_000, maxAttempts: 2 };
  expect(callBudgetFromEnvironment({ [CALL_BUDGET_VARIABLE]: JSON.stringify({ ...relaxed, extra: 1 }) })).toEqual(relaxed);
});

it.each([
  ['{"connectionTimeoutMs":500,"requestTimeoutMs":1000}'],
  ['{"connectionTimeoutMs":0,"requestTimeoutMs":1000,"maxAttempts":2}'],
  ['not json'],
])('refuses %s', (value) => {
  expect(() => callBudgetFromEnvironment({ [CALL_BUDGET_VARIABLE]: value })).toThrow();
});
