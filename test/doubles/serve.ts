/**
 * The doubles of Stripe and Adyen as servers of their own, for a developer's `npm start` without a
 * provider account:
 *
 *   npx tsx test/doubles/serve.ts          # prints the two addresses
 *   STRIPE_API_URL=http://127.0.0.1:4242 ADYEN_CHECKOUT_API_URL=http://127.0.0.1:4243/v71 npm start
 *
 * Then tell each double where your configuration's webhooks go:
 *   curl -d '{"url": "http://localhost:3000/gateway-webhooks/<id>", "secret": "whsec_…"}' http://127.0.0.1:4242/double/webhook-endpoints
 *   curl -d '{"url": "http://localhost:3000/gateway-webhooks/<id>", "hmac_key": "<hex>"}' http://127.0.0.1:4243/double/webhook
 * Adyen's notifications are sent half a second after what they tell. A 3-D Secure page is answered
 * by its links (or `?answer=approve`).
 */
import { startAdyenDouble } from "./adyen.ts";
import { startStripeDouble } from "./stripe.ts";

const stripe = await startStripeDouble({ port: Number(process.env.STRIPE_DOUBLE_PORT ?? 4242) });
const adyen = await startAdyenDouble({
  port: Number(process.env.ADYEN_DOUBLE_PORT ?? 4243),
  autoDeliverMs: 500,
});
console.log(`STRIPE_API_URL=${stripe.url}`);
console.log(`ADYEN_CHECKOUT_API_URL=${adyen.url}`);
const stop = async () => {
  await Promise.all([stripe.close(), adyen.close()]);
  process.exit(0);
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
