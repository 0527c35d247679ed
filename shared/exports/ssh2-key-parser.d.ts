/** ssh2 types its package entry only; this module is the one `utils.parseKey` is. */
declare module "ssh2/lib/protocol/keyParser.js" {
  import type { ParsedKey } from "ssh2";

  const keyParser: {
    parseKey(data: string | Buffer, passphrase?: string): ParsedKey | ParsedKey[] | Error;
  };
  export default keyParser;
}

/** ssh2's client module: the package's `Client`. */
declare module "ssh2/lib/client.js" {
  import type { Client } from "ssh2";

  const client: typeof Client;
  export default client;
}
