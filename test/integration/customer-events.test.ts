import { describe, expect, it } from "vitest";
import { useInProcessApi } from "../e2e/harness.ts";
import { recordedEvents } from "../support/events.ts";

const local = useInProcessApi("Customer events test");
const { sandbox, live } = local;

/** The events of an environment about one customer, oldest first. */
async function customerEvents(scope: string, customerId: string) {
  return (await recordedEvents(scope)).filter(
    (event) => (event.data as { customer?: { id?: string } }).customer?.id === customerId,
  );
}

describe("customer events", () => {
  it("records customer.created, customer.updated and customer.deleted with the customer as answered", async () => {
    const scope = local.project.sandbox.project_id;
    const created = (await sandbox.post("/customers", { first_name: "Ada" })).body.customer;
    const updated = (await sandbox.put(`/customers/${created.id}`, { last_name: "Lovelace" })).body.customer;
    expect((await sandbox.del(`/customers/${created.id}`)).status).toBe(200);

    const events = await customerEvents(scope, created.id);
    expect(events.map((event) => [event.name, event.data])).toEqual([
      ["customer.created", { customer: created }],
      ["customer.updated", { customer: updated }],
      ["customer.deleted", { customer: updated }],
    ]);
    for (const event of events) {
      expect(event).toMatchObject({
        type: "event",
        project_id: scope,
        sandbox: true,
        id: expect.stringMatching(/^ev_/),
      });
    }
  });

  it("records nothing for a refused change, and marks live events as not sandbox", async () => {
    const scope = local.project.live.project_id;
    const customer = (await live.post("/customers", { currency: "EUR" })).body.customer;
    expect((await live.put(`/customers/${customer.id}`, { currency: "USD" })).status).toBe(400);
    const events = await customerEvents(scope, customer.id);
    expect(events.map((event) => [event.name, event.sandbox])).toEqual([["customer.created", false]]);
  });

  it("applies concurrent changes of one customer one after the other, each with its event", async () => {
    const scope = local.project.sandbox.project_id;
    const customer = (await sandbox.post("/customers", {})).body.customer;
    const fields = ["first_name", "last_name", "city"] as const;
    const answers = await Promise.all(
      fields.map((field) => sandbox.put(`/customers/${customer.id}`, { [field]: `${field} value` })),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    const final = (await sandbox.get(`/customers/${customer.id}`)).body.customer;
    expect(final).toMatchObject({
      first_name: "first_name value",
      last_name: "last_name value",
      city: "city value",
    });
    const updates = (await customerEvents(scope, customer.id)).filter(
      (event) => event.name === "customer.updated",
    );
    expect(updates).toHaveLength(3);
  });
});
