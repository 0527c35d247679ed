import { cardInformation } from "../../shared/cards/service.ts";
import { PUBLIC_KEY_ACCESS } from "../../shared/http/access.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** GET /iins/{iin}: the scheme of the cards an IIN starts (browsers and apps, with the public key). */
export const handler = api(
  async (request) => ok({ card_information: cardInformation(request.path.iin ?? "") }),
  {
    publicKey: PUBLIC_KEY_ACCESS.iins,
  },
);
