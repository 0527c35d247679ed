import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { vi } from "vitest";
import { dynamo } from "../../shared/db/client.ts";
import type { ItemKey } from "../../shared/db/keys.ts";

/**
 * Holds the first `held` reads of one item (the reads a change decides from) until `release()`; later
 * reads go through. For tests of a change that races another: what the other writes between the
 * held read and the change's own write. Undone by `vi.restoreAllMocks()`.
 */
export function holdItemReads(item: ItemKey, held: number) {
  const send = dynamo.send.bind(dynamo);
  let release!: () => void;
  const released = new Promise<void>((done) => {
    release = done;
  });
  let reads = 0;
  const waiters: (() => void)[] = [];
  vi.spyOn(dynamo, "send").mockImplementation((async (command: unknown) => {
    const result = await send(command as never);
    const key = command instanceof GetCommand ? command.input.Key : undefined;
    if (key?.pk === item.pk && key?.sk === item.sk) {
      reads += 1;
      for (const wake of waiters.splice(0)) wake();
      if (reads <= held) await released;
    }
    return result;
  }) as never);
  return {
    /** Resolves once `count` reads of the item have been made (and, up to `held`, are held). */
    async reads(count: number) {
      while (reads < count) await new Promise<void>((done) => waiters.push(done));
    },
    release: () => release(),
  };
}
