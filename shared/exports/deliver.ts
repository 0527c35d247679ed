import { clock } from "../clock.ts";
import type { Scope } from "../db/keys.ts";
import { logger } from "../observability/logger.ts";
import { webhookSettings } from "../webhooks/settings.ts";
import { findDeliveryRequest } from "./delivery-request.ts";
import { storageKey } from "./export.ts";
import { findExport, recordDelivery } from "./export-store.ts";
import { DeliveryError, deliverBySftp } from "./sftp-delivery.ts";
import { openSecret, pinHostKey, recordDeliveryError, sftpSettingsOf } from "./sftp-settings.ts";
import { exportStorage } from "./storage/index.ts";

/**
 * Delivering a completed export to its environment's SFTP server (the delivery queue's worker,
 * `functions/exports/deliver.ts`): the sealed secret opened for the connection only, the host key
 * pinned on the first success and any other key refused later. The outcome is recorded on the
 * export (`delivery`) and on the settings (`last_error`).
 *
 * - `delivered`, or already delivered: done;
 * - `refused` (a changed host key, refused credentials): recorded, done (the merchant's to fix);
 * - `failed` (unreachable, timed out, cut off): recorded, and worth another try (the queue's);
 * - `skipped`: no request, no such export, or no SFTP settings any more.
 */
export type DeliveryOutcome = "delivered" | "refused" | "failed" | "skipped";

export async function deliverRequestedExport(scope: Scope, exportId: string): Promise<DeliveryOutcome> {
  const [request, record, settings] = await Promise.all([
    findDeliveryRequest(scope, exportId),
    findExport(scope, exportId),
    sftpSettingsOf(scope),
  ]);
  if (!request || !record || record.status !== "completed" || !settings) return "skipped";
  if (record.delivery?.status === "delivered") return "delivered";
  const at = () => clock.now().toISOString();
  try {
    const secret = await openSecret(settings);
    const body = await exportStorage().read(storageKey(record));
    const { fingerprint } = await deliverBySftp({
      settings,
      secret,
      remotePath: request.remotePath,
      body,
      allowPrivateNetwork: record.sandbox && webhookSettings.sandboxMayUsePrivateNetwork,
    });
    if (settings.host_key_fingerprint === null) await pinHostKey(settings, fingerprint);
    await recordDelivery(record, {
      status: "delivered",
      remote_path: request.remotePath,
      host_key_fingerprint: fingerprint,
      error: null,
      at: at(),
    });
    await recordDeliveryError(settings, null);
    logger.info("Export delivered by SFTP", { export_id: record.id, project_id: scope });
    return "delivered";
  } catch (error) {
    const delivery = error instanceof DeliveryError ? error : undefined;
    // Never the error itself in the record: only our own messages, which hold no secret.
    const message =
      delivery?.message ?? "The file could not be delivered (an internal error); it will be tried again.";
    if (!delivery) logger.error("Export delivery failed", { export_id: record.id, project_id: scope, error });
    else logger.warn("Export delivery failed", { export_id: record.id, project_id: scope, reason: message });
    await recordDelivery(record, {
      status: "failed",
      remote_path: request.remotePath,
      host_key_fingerprint: delivery?.fingerprint ?? null,
      error: message,
      at: at(),
    });
    await recordDeliveryError(settings, message);
    return delivery?.refused ? "refused" : "failed";
  }
}
