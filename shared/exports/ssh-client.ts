/**
 * ssh2's client on its own (`ssh2/lib/client.js`, what the package's `Client` is): the SFTP
 * delivery loads it without ssh2's server. Typed in `ssh2-key-parser.d.ts`.
 */
import Client from "ssh2/lib/client.js";

export { Client };
