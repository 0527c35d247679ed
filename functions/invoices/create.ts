import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { createInvoice } from "../../shared/invoices/service.ts";

/** POST /invoices */
export const handler = api(
  async (request) => {
    const invoice = await createInvoice(request.caller, request.body, (presented) =>
      request.commitWith(ok({ invoice: presented })),
    );
    return ok({ invoice });
  },
  // The whole change is one transaction: it claims the Idempotency-Key too (one round trip).
  { expand: expandAnswer("invoice"), idempotency: "in-the-write" },
);
