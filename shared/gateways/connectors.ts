import { type ConnectorContext, SANDBOX_REFUSED_KEY_PREFIX } from "./catalogue.ts";
import type { PaymentConnector } from "./connector.ts";
import { measuredConnector } from "./measured.ts";
import { sandboxConnector, sandboxGateway } from "./sandbox/gateway.ts";
import { tableLedger } from "./sandbox/ledger.ts";
import { rehearsalOf } from "./sandbox/rehearsal.ts";

/**
 * The connector of a gateway configuration, from its opened settings. A provider's connector module
 * is imported here on first use (`import()`), so that its code runs only in the functions that pay
 * through it, and a function that never pays carries none of it: only payment paths call this.
 * Every call through it is measured (`measured.ts`).
 */
export async function connectGateway(
  gatewayName: string,
  settings: Readonly<Record<string, string>>,
  context: ConnectorContext,
): Promise<PaymentConnector> {
  return measuredConnector(await providerConnector(gatewayName, settings, context), context.configurationId);
}

async function providerConnector(
  gatewayName: string,
  settings: Readonly<Record<string, string>>,
  context: ConnectorContext,
): Promise<PaymentConnector> {
  switch (gatewayName) {
    case "sandbox": {
      if (settings.api_key?.startsWith(SANDBOX_REFUSED_KEY_PREFIX)) return refusedCredentials;
      const rehearsal = rehearsalOf(settings);
      return rehearsal ? sandboxGateway(tableLedger, rehearsal) : sandboxConnector;
    }
    case "stripe": {
      const { stripeConnector } = await import("./stripe/connector.ts");
      return stripeConnector({ secretKey: settings.secret_key ?? "" });
    }
    case "adyen": {
      const { adyenConnector } = await import("./adyen/connector.ts");
      return adyenConnector({
        apiKey: settings.api_key ?? "",
        merchantAccount: settings.merchant_account ?? "",
        ...(settings.live_url_prefix ? { liveUrlPrefix: settings.live_url_prefix } : {}),
        sandbox: context.sandbox,
        configurationId: context.configurationId,
      });
    }
    default:
      throw new Error(
        `No connector for the ${gatewayName} gateway of configuration ${context.configurationId}`,
      );
  }
}

/** What a provider answers every request made with wrong credentials: nothing is done or recorded. */
const refusedCredentials: PaymentConnector = (() => {
  const refusal = {
    status: "declined" as const,
    errorType: "gateway.validation-error" as const,
    message: "The gateway refused the credentials of this gateway configuration: check its api_key.",
  };
  const checks = { cvc: "unavailable" as const, avs: "unavailable" as const };
  return {
    card: {
      authorize: async () => ({ ...refusal, checks, threeDS: "not-applicable" as const }),
      incrementAuthorization: async () => refusal,
      verifyCard: async () => ({ ...refusal, checks }),
    },
    nativeApm: { pay: async () => refusal },
    capture: async () => refusal,
    void: async () => refusal,
    refund: async () => refusal,
    lookup: async () => ({ status: "not-found" as const }),
  };
})();
