import { DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { describe, expect, inject, it } from "vitest";

describe("the test run's global setup", () => {
  it("gives every worker the test database through the environment and through inject", async () => {
    const endpoint = inject("dynamodbEndpoint");
    expect(process.env.AWS_ENDPOINT_URL_DYNAMODB).toBe(endpoint);
    expect(process.env.TABLE_NAME).toBe(inject("tableName"));
    expect(process.env.AWS_REGION).toBe("us-east-1");
    expect(process.env.AWS_ACCESS_KEY_ID).toBeTruthy();

    const client = new DynamoDBClient({});
    try {
      const { Table } = await client.send(new DescribeTableCommand({ TableName: process.env.TABLE_NAME }));
      expect(Table?.TableStatus).toBe("ACTIVE");
    } finally {
      client.destroy();
    }
  });
});
