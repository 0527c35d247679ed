import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { countedRoundTrip } from "./round-trips.ts";

/**
 * One client per container. The endpoint comes from the SDK's own settings
 * (`AWS_ENDPOINT_URL_DYNAMODB` points it at DynamoDB Local in the local stack and the tests).
 */
export const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({}), {
  marshallOptions: { removeUndefinedValues: true },
});

let calls = 0;
dynamo.middlewareStack.add(
  (next) => (args) => {
    calls += 1;
    return countedRoundTrip(() => next(args));
  },
  { step: "initialize", name: "countDynamoCalls" },
);

/** Round trips sent to DynamoDB by this container so far (the benchmark reports them per request). */
export function dynamoCallCount(): number {
  return calls;
}
