/**
 * What an IIN (a card's first six digits) tells of the card before any provider sees it: its type
 * (credit, debit, prepaid) and its issuer's country, for routing rules. Issuers' ranges are sold as
 * BIN databases; this table holds the sandbox test cards' ranges (the README lists them), so rules
 * on card type and country can be rehearsed. A card whose IIN the table does not hold has an unknown
 * type and country: a rule conditioned on either never matches it (and its explanation says so).
 */
export type CardType = "credit" | "debit" | "prepaid";

export interface IinDetails {
  type: CardType;
  /** ISO 3166-1 alpha-2. */
  country: string;
}

const IINS: Readonly<Record<string, IinDetails>> = {
  "424242": { type: "credit", country: "US" },
  "400000": { type: "credit", country: "US" },
  "400005": { type: "debit", country: "US" },
  "400276": { type: "credit", country: "DE" },
  "400250": { type: "debit", country: "FR" },
  "400826": { type: "credit", country: "GB" },
  "555555": { type: "credit", country: "US" },
  "510000": { type: "credit", country: "US" },
  "520082": { type: "debit", country: "US" },
  "510510": { type: "prepaid", country: "US" },
  "378282": { type: "credit", country: "US" },
};

export function iinDetails(iin: string): IinDetails | undefined {
  return IINS[iin.slice(0, 6)];
}
