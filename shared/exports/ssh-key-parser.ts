/**
 * ssh2's key parser on its own (`ssh2/lib/protocol/keyParser.js`, what `utils.parseKey` is): the
 * routes that check a private key load it without the SSH client and server (about 200 KiB less in
 * their bundles). A CommonJS module: imported whole, as Node's ESM loader allows. Typed in
 * `ssh2-key-parser.d.ts`.
 */
import keyParser from "ssh2/lib/protocol/keyParser.js";

export const parseKey = keyParser.parseKey;
