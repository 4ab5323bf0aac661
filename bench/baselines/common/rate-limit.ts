import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';

/** The caller as the API Gateway authorizer passes it on (values are strings in REST APIs). */
export interface BaselineCaller {
  keyId: string;
  perMinute: number;
  perDay: number;
}

export function callerOf(authorizer: Record<string, unknown> | null | undefined): BaselineCaller | undefined {
  const keyId = authorizer?.keyId;
  const perMinute = Number(authorizer?.perMinute);
  const perDay = Number(authorizer?.perDay);
  if (typeof keyId !== 'string' || !keyId || !(perMinute > 0) || !(perDay > 0)) return undefined;
  return { keyId, perMinute, perDay };
}

export interface RateLimitResult {
  allowed: boolean;
  headers: Record<string, string>;
}

/**
 * Fixed UTC minute and day windows on one item per key and day: one
 * conditional UpdateItem per request, a second one at the first request of a
 * minute (the same work per request as the service's limiter).
 */
export async function countRequest(
  db: DynamoDBDocumentClient,
  tableName: string,
  caller: BaselineCaller,
  nowMs: number,
): Promise<RateLimitResult> {
  const minuteStart = Math.floor(nowMs / 60_000) * 60;
  const day = new Date(nowMs).toISOString().slice(0, 10);
  const key = { pk: `${caller.keyId}#${day}` };
  const values = { ':one': 1, ':minute': minuteStart, ':perDay': caller.perDay };
  const counted = (item: Record<string, unknown> | undefined): RateLimitResult => ({
    allowed: true,
    headers: {
      'X-RateLimit-Limit': String(caller.perMinute),
      'X-RateLimit-Remaining': String(Math.max(0, caller.perMinute - Number(item?.minuteCount ?? 0))),
      'X-RateLimit-Reset': String(minuteStart + 60),
    },
  });
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: 'SET minuteCount = minuteCount + :one, dayCount = dayCount + :one',
        ConditionExpression: 'minuteStart = :minute AND minuteCount < :perMinute AND dayCount < :perDay',
        ExpressionAttributeValues: { ...values, ':perMinute': caller.perMinute },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return counted(Attributes);
  } catch (error) {
    if (!(error instanceof Error) || error.name !== 'ConditionalCheckFailedException') throw error;
  }
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression:
          'SET minuteStart = :minute, minuteCount = :one, dayCount = if_not_exists(dayCount, :zero) + :one, expiresAt = :expiresAt',
        ConditionExpression:
          '(attribute_not_exists(minuteStart) OR minuteStart < :minute) AND (attribute_not_exists(dayCount) OR dayCount < :perDay)',
        ExpressionAttributeValues: { ...values, ':zero': 0, ':expiresAt': minuteStart + 36 * 86_400 },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return counted(Attributes);
  } catch (error) {
    if (!(error instanceof Error) || error.name !== 'ConditionalCheckFailedException') throw error;
    return {
      allowed: false,
      headers: {
        'X-RateLimit-Limit': String(caller.perMinute),
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(minuteStart + 60),
        'Retry-After': String(Math.max(1, minuteStart + 60 - Math.floor(nowMs / 1000))),
      },
    };
  }
}
