// Installs DynamoDB Local (AWS's own DynamoDB implementation, a Java program) for the local stack
// and the tests. The jar is published on the npm registry inside the amplify-dynamodb-simulator
// tarball; installing that package would pull ~280 dependencies we do not need, so we take only
// the tarball, check it against the pinned integrity, and extract its `emulator/` folder.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
// The pinned tarball, shared with lib/local/dynamodb-local.ts.
const pinned = JSON.parse(readFileSync(join(here, "dynamodb-local.json"), "utf8"));
const DYNAMODB_LOCAL_PACKAGE = `${pinned.package}@${pinned.version}`;
const INTEGRITY = pinned.integrity;

const target = join(here, "..", ".cache", "dynamodb-local", pinned.version);

if (existsSync(join(target, "DynamoDBLocal.jar"))) process.exit(0);

const work = mkdtempSync(join(tmpdir(), "ddb-local-"));
try {
  const packed = JSON.parse(
    execFileSync("npm", ["pack", DYNAMODB_LOCAL_PACKAGE, "--json", "--pack-destination", work], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }),
  )[0];
  if (packed.integrity !== INTEGRITY) {
    throw new Error(
      `${DYNAMODB_LOCAL_PACKAGE}: integrity ${packed.integrity} is not the pinned ${INTEGRITY}`,
    );
  }
  execFileSync("tar", ["-xzf", join(work, packed.filename), "-C", work, "package/emulator"]);
  mkdirSync(dirname(target), { recursive: true });
  rmSync(target, { recursive: true, force: true });
  renameSync(join(work, "package", "emulator"), target);
  console.log(`DynamoDB Local installed in ${target}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
