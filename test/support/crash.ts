import { vi } from "vitest";
import { dynamo } from "../../shared/db/client.ts";

/**
 * A process killed at its `nth` DynamoDB transaction (counted from now): that write never reaches
 * the table, and the request fails as a crash would leave it. Returns the restore of the real client.
 */
export function killedAtTransaction(nth: number): () => void {
  const send = dynamo.send.bind(dynamo);
  let transactions = 0;
  const spy = vi.spyOn(dynamo, "send").mockImplementation(((command: { constructor: { name: string } }) => {
    if (command.constructor.name === "TransactWriteCommand" && ++transactions === nth) {
      return Promise.reject(new Error("process killed"));
    }
    return send(command as never);
  }) as never);
  return () => spy.mockRestore();
}
