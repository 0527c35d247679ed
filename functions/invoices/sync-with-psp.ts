import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { getInvoice } from "../../shared/invoices/service.ts";
import { syncWithProvider } from "../../shared/payments/gateway-webhooks.ts";

/** PUT /invoices/{invoice_id}/sync-with-psp: settles what the provider decided and we had missed. */
export const handler = api(
  async (request) => {
    const invoiceId = request.path.invoice_id ?? "";
    await syncWithProvider(request.caller, invoiceId);
    return ok({ invoice: await getInvoice(request.caller, invoiceId) });
  },
  { expand: expandAnswer("invoice") },
);
