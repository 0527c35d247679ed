import { timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import ssh2, { type Connection, type ParsedKey } from "ssh2";

/**
 * A real SFTP server for tests, made with `ssh2`'s `Server`: it speaks SSH and SFTP v3 on a port of
 * its own, authenticates one user by password or by public key, and keeps the files written in
 * memory (`files`), so a test reads the bytes delivered. It implements what a client writing a file
 * uses: OPEN, WRITE, CLOSE, FSETSTAT/SETSTAT, RENAME (refusing to replace, as SFTP v3 servers do),
 * REMOVE, STAT.
 */
// ssh2 is a CommonJS package: imported whole, as Node's ESM loader allows (tsx scripts too).
const { Server, utils } = ssh2;
const { OPEN_MODE, STATUS_CODE } = utils.sftp;

export interface TestSftpServer {
  port: number;
  /** The server's host key (OpenSSH private key), to start another server with the same one. */
  hostKey: string;
  files: Map<string, Buffer>;
  /** Each successful login's method (`password`, `publickey`). */
  logins: string[];
  close(): Promise<void>;
}

export interface TestSftpServerOptions {
  username: string;
  password?: string;
  /** The user's public key (OpenSSH format) for public-key logins. */
  publicKey?: string;
  hostKey?: string;
  port?: number;
}

/**
 * A new ed25519 key pair (OpenSSH format). ssh2's generator now and then writes a private key its own
 * parser refuses ("Malformed OpenSSH private key", about 1 in 300 here): such a pair is made again.
 */
export function newKeyPair(): { private: string; public: string } {
  for (;;) {
    const pair = utils.generateKeyPairSync("ed25519");
    if (!(utils.parseKey(pair.private) instanceof Error) && !(utils.parseKey(pair.public) instanceof Error)) {
      return pair;
    }
  }
}

export function newHostKey(): string {
  return newKeyPair().private;
}

export async function startSftpServer(options: TestSftpServerOptions): Promise<TestSftpServer> {
  const hostKey = options.hostKey ?? newHostKey();
  const files = new Map<string, Buffer>();
  const logins: string[] = [];
  const allowedKey = options.publicKey ? (utils.parseKey(options.publicKey) as ParsedKey) : undefined;
  const connections = new Set<Connection>();

  const server = new Server({ hostKeys: [hostKey] }, (client) => {
    connections.add(client);
    client.on("close", () => connections.delete(client));
    client.on("error", () => connections.delete(client));
    client.on("authentication", (context) => {
      const sameUser = context.username === options.username;
      if (context.method === "password" && options.password !== undefined && sameUser) {
        const given = Buffer.from(context.password);
        const expected = Buffer.from(options.password);
        if (given.length === expected.length && timingSafeEqual(given, expected)) {
          logins.push("password");
          return context.accept();
        }
      }
      if (context.method === "publickey" && allowedKey && sameUser) {
        const matches =
          context.key.algo === allowedKey.type &&
          timingSafeEqual(context.key.data, allowedKey.getPublicSSH() as Buffer);
        if (matches) {
          if (!context.signature) return context.accept();
          if (context.blob && allowedKey.verify(context.blob, context.signature, context.hashAlgo) === true) {
            logins.push("publickey");
            return context.accept();
          }
        }
      }
      return context.reject(["password", "publickey"]);
    });
    client.on("ready", () => {
      client.on("session", (acceptSession) => {
        const session = acceptSession();
        session.on("sftp", (acceptSftp) => {
          const sftp = acceptSftp();
          const handles = new Map<number, string>();
          let nextHandle = 0;
          const handleOf = (buffer: Buffer) => handles.get(buffer.readUInt32BE(0));
          sftp.on("OPEN", (request, filename, flags) => {
            if (!(flags & OPEN_MODE.WRITE)) return sftp.status(request, STATUS_CODE.OP_UNSUPPORTED);
            if (flags & OPEN_MODE.TRUNC || !files.has(filename)) files.set(filename, Buffer.alloc(0));
            const id = nextHandle++;
            handles.set(id, filename);
            const handle = Buffer.alloc(4);
            handle.writeUInt32BE(id, 0);
            return sftp.handle(request, handle);
          });
          sftp.on("WRITE", (request, handle, offset, data) => {
            const name = handleOf(handle);
            if (name === undefined) return sftp.status(request, STATUS_CODE.FAILURE);
            const current = files.get(name) ?? Buffer.alloc(0);
            const end = offset + data.length;
            const next = Buffer.alloc(Math.max(current.length, end));
            current.copy(next);
            data.copy(next, offset);
            files.set(name, next);
            return sftp.status(request, STATUS_CODE.OK);
          });
          sftp.on("CLOSE", (request, handle) => {
            handles.delete(handle.readUInt32BE(0));
            return sftp.status(request, STATUS_CODE.OK);
          });
          sftp.on("FSETSTAT", (request) => sftp.status(request, STATUS_CODE.OK));
          sftp.on("SETSTAT", (request) => sftp.status(request, STATUS_CODE.OK));
          sftp.on("STAT", (request, path) => {
            const file = files.get(path);
            if (!file) return sftp.status(request, STATUS_CODE.NO_SUCH_FILE);
            return sftp.attrs(request, {
              mode: 0o100600,
              uid: 0,
              gid: 0,
              size: file.length,
              atime: 0,
              mtime: 0,
            });
          });
          sftp.on("RENAME", (request, from, to) => {
            const file = files.get(from);
            if (!file || files.has(to)) return sftp.status(request, STATUS_CODE.FAILURE);
            files.delete(from);
            files.set(to, file);
            return sftp.status(request, STATUS_CODE.OK);
          });
          sftp.on("REMOVE", (request, path) => {
            const existed = files.delete(path);
            return sftp.status(request, existed ? STATUS_CODE.OK : STATUS_CODE.NO_SUCH_FILE);
          });
        });
      });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    hostKey,
    files,
    logins,
    close: () =>
      new Promise<void>((resolve) => {
        for (const connection of connections) connection.end();
        server.close(() => resolve());
      }),
  };
}
