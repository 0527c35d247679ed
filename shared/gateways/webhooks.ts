/**
 * What a provider's webhook means for our payments, whichever provider sent it (each one's module
 * reads its own format: `stripe/webhook.ts`, `adyen/webhook.ts`); the payments core applies it
 * (`shared/payments/gateway-webhooks.ts`).
 */
export type GatewayEffect =
  /**
   * The provider decided (or may have decided) an operation on this payment: the transaction's
   * reserved operation, if any, is settled from the provider's record.
   */
  | {
      kind: "settle";
      gatewayReference: string;
      transactionId: string | null;
      /**
       * The operation the provider decided, when it says (Adyen's event and the reference it names):
       * only a reservation of that operation is settled. Absent: whatever is reserved (Stripe's
       * events are about the payment as a whole).
       */
      operation?: { type: "authorization" | "capture" | "void" | "refund" | "increment"; reference: string };
    }
  /** A refund the provider accepted has failed since: it no longer counts as refunded. */
  | { kind: "refund-failed"; gatewayReference: string; refundId: string };
