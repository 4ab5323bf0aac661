// Loaded before every test file (jest setupFiles).
// Function logs are asserted by the tests that care; elsewhere they are noise.
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
// Metrics are CloudWatch EMF lines for AWS; the tests that check them build their own.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
// The tests say where DynamoDB is; a developer's own setting must not send the key tool elsewhere.
delete process.env.AWS_ENDPOINT_URL_DYNAMODB;
